import type { HttpContext } from '@adonisjs/core/http'
import { fail, FILE } from './config_checks.ts'
import debug from './debug.ts'

/** The trace a request batch belongs to, stamped on each of its entries as `content.trace` */
export interface TraceIds {
  /** 32 lowercase hex characters, not all zero */
  traceId: string
  /** 16 lowercase hex characters (the caller's span), or null when unknown */
  spanId: string | null
  /** The caller's sampled flag, when a `traceparent` header said it */
  sampled?: boolean
}

/** Reads the trace of a request: the app's own source, such as OpenTelemetry's active span */
export type TraceContextResolver = (
  ctx: HttpContext
) => { traceId: string; spanId?: string | null; sampled?: boolean } | null | undefined

/** `traceContext`: `true` reads W3C `traceparent`; a function reads the app's own source */
export type TraceContextOption = boolean | TraceContextResolver

/** Longest `traceparent` value read; anything longer is ignored unread */
export const MAX_TRACEPARENT_LENGTH = 512

const TRACE_ID = /^[0-9a-f]{32}$/
const SPAN_ID = /^[0-9a-f]{16}$/
const ZERO_TRACE = '0'.repeat(32)
const ZERO_SPAN = '0'.repeat(16)
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
// a later version may append fields after a dash; its first four are read as version 00's
const LATER_VERSION = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/**
 * The ids of a W3C `traceparent` header, or null for anything malformed:
 * uppercase hex, an all-zero id, version `ff`, extra fields on version 00,
 * a repeated header (Node joins repeats with a comma), or over
 * `MAX_TRACEPARENT_LENGTH` characters. Never throws.
 */
export function parseTraceparent(header: unknown): TraceIds | null {
  if (typeof header !== 'string' || header.length > MAX_TRACEPARENT_LENGTH) return null
  const value = header.trim()
  let match = VERSION_00.exec(value)
  if (!match) {
    const later = LATER_VERSION.exec(value)
    if (!later || later[1] === '00' || later[1] === 'ff') return null
    match = [later[0], later[2], later[3], later[4]] as unknown as RegExpExecArray
  }
  const [, traceId, spanId, flags] = match
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 }
}

/** Ids an app's resolver returned, kept only when they are W3C-shaped */
function checkedIds(value: ReturnType<TraceContextResolver>): TraceIds | null {
  if (!value || typeof value !== 'object') return null
  const traceId = typeof value.traceId === 'string' ? value.traceId.toLowerCase() : ''
  if (!TRACE_ID.test(traceId) || traceId === ZERO_TRACE) return null
  const span = typeof value.spanId === 'string' ? value.spanId.toLowerCase() : null
  const spanId = span && SPAN_ID.test(span) && span !== ZERO_SPAN ? span : null
  const ids: TraceIds = { traceId, spanId }
  if (typeof value.sampled === 'boolean') ids.sampled = value.sampled
  return ids
}

/**
 * Reads a request's trace ids as `traceContext` says; null when there are
 * none or they are malformed. A resolver that throws is ignored: tracing
 * never fails a request.
 */
export function readTrace(option: TraceContextOption, ctx: HttpContext): TraceIds | null {
  if (option === true) return parseTraceparent(ctx.request.header('traceparent'))
  if (typeof option !== 'function') return null
  try {
    return checkedIds(option(ctx))
  } catch (error) {
    debug('traceContext resolver threw: %s', (error as Error)?.message)
    return null
  }
}

/** `traceLink` with the ids in place of `{traceId}` and `{spanId}` */
export function traceUrl(template: string | undefined, trace: TraceIds | null | undefined) {
  if (!template || !trace) return null
  return template
    .replaceAll('{traceId}', encodeURIComponent(trace.traceId))
    .replaceAll('{spanId}', encodeURIComponent(trace.spanId ?? ''))
}

/** Checks `traceContext` and `traceLink` in config/console.ts */
export function resolveTracing(traceContext: unknown, traceLink: unknown) {
  if (
    traceContext !== undefined &&
    typeof traceContext !== 'boolean' &&
    typeof traceContext !== 'function'
  ) {
    fail(
      `Invalid "traceContext" in ${FILE}: use true (reads the W3C traceparent header) or a function (ctx) => ({ traceId, spanId })`
    )
  }
  if (traceLink !== undefined) {
    const example = "'https://tempo.example.com/trace/{traceId}'"
    if (typeof traceLink !== 'string' || !traceLink.includes('{traceId}')) {
      fail(
        `Invalid "traceLink" in ${FILE}: use a URL template holding {traceId}, such as ${example}`
      )
    }
    let url: URL | undefined
    try {
      url = new URL(traceUrl(traceLink, { traceId: '1'.repeat(32), spanId: '1'.repeat(16) })!)
    } catch {}
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
      fail(`Invalid "traceLink" in ${FILE}: use an http(s) URL template such as ${example}`)
    }
  }
  return {
    traceContext: (traceContext ?? false) as TraceContextOption,
    traceLink: traceLink as string | undefined,
  }
}
