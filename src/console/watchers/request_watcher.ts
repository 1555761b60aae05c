import { performance } from 'node:perf_hooks'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { CpuProfiler, ProfileCapture } from '../profiling/profiler.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactHeaders, redactValue } from '../redact.ts'
import { readTrace } from '../trace_context.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import { REPLAY_BATCH_HEADER, REPLAY_HEADER, replayedEntryId } from '../http/request_tools.ts'

const batches = new WeakMap<HttpContext, RecordingBatch>()

/** The batch a request runs in (the exception watcher finds it through the context) */
export function batchOf(ctx: HttpContext) {
  return batches.get(ctx)
}

/**
 * The request body as it is recorded: skipped for binary content types, for
 * `skipBody`, and over `maxBodyBytes`; otherwise the parsed body, redacted.
 */
export function captureBody(ctx: HttpContext, config: ResolvedConsoleConfig): unknown {
  const capture = config.requestCapture
  const type = String(ctx.request.header('content-type') ?? '').toLowerCase()
  if (type) {
    for (const skipped of capture.skipBodyContentTypes) {
      if (type.startsWith(skipped)) return `[skipped: ${type.split(';')[0]}]`
    }
  }
  if (capture.skipBody?.(ctx)) return '[skipped]'
  const declared = Number(ctx.request.header('content-length'))
  const raw = ctx.request.raw()
  const size = raw !== null ? Buffer.byteLength(raw) : Number.isFinite(declared) ? declared : 0
  if (size > capture.maxBodyBytes) {
    return `[skipped: ${size} bytes over the ${capture.maxBodyBytes} bytes cap]`
  }
  const body = ctx.request.body()
  if (!body || (typeof body === 'object' && !hasOwnKeys(body))) return null
  return redactValue(body, config.redact)
}

/** Whether `value` has an own enumerable key, without listing them all */
function hasOwnKeys(value: object) {
  for (const key in value) if (Object.hasOwn(value, key)) return true
  return false
}

/** The query string as recorded: most requests have none, and an empty one needs no copy */
function recordedQuery(qs: Record<string, unknown>, config: ResolvedConsoleConfig) {
  return hasOwnKeys(qs) ? redactValue(qs, config.redact) : {}
}

function requestTags(slow: boolean, replayOf: string | null | undefined) {
  const tags: string[] = []
  if (slow) tags.push('slow')
  if (replayOf) tags.push('replay')
  return tags
}

/**
 * Server middleware recording each request as one batch: everything the
 * request does (queries, exceptions) shares its batch id. The console's own
 * routes run in the ignored batch and are never recorded.
 */
export class RequestWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #customIp: boolean
  #profiler?: CpuProfiler

  /**
   * `customIp`: the app sets `http.getIp`, so the client ip always comes from `request.ip()`;
   * `profiler`: counts every request and profiles the armed or sampled ones
   */
  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { customIp?: boolean; profiler?: CpuProfiler } = {}
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#customIp = options.customIp ?? false
    this.#profiler = options.profiler
  }

  /**
   * The client ip as `request.ip()` gives it. Without an X-Forwarded-For
   * header (and without a custom `getIp`) that is the socket's address, read
   * directly: resolving the proxy chain costs more than recording the request.
   */
  #ip(ctx: HttpContext) {
    if (this.#customIp || ctx.request.request.headers['x-forwarded-for'] !== undefined) {
      return ctx.request.ip()
    }
    return ctx.request.request.socket?.remoteAddress ?? ctx.request.ip()
  }

  #isConsoleRoute(url: string) {
    const path = this.#config.path
    return url === path || url.startsWith(`${path}/`)
  }

  // not async itself: the promise of the handler that runs is the middleware's, one fewer per request
  handle(ctx: HttpContext, next: NextFn) {
    if (this.#profiler) return this.#profiled(this.#profiler, ctx, next)
    return this.#handle(ctx, next)
  }

  /** Every request is counted (a profile says how many ran beside it); armed ones are captured */
  async #profiled(profiler: CpuProfiler, ctx: HttpContext, next: NextFn) {
    const eligible = !this.#recorder.paused && !this.#isConsoleRoute(ctx.request.url())
    const capture = profiler.enter(ctx.request.method(), ctx.request.url(), eligible)
    try {
      return await this.#handle(ctx, next, capture)
    } finally {
      // a request the watcher skipped still ends its capture
      profiler.leave(capture)
    }
  }

  async #handle(ctx: HttpContext, next: NextFn, capture?: ProfileCapture) {
    // overloaded: not even a batch (exceptions are still counted by the recorder)
    if (!this.#config.enabled || this.#recorder.paused) return next()
    const url = ctx.request.url()
    const batch = this.#recorder.openBatch(this.#isConsoleRoute(url))
    batches.set(ctx, batch)
    if (batch.ignored) return batchStorage.run(batch, next)

    const started = performance.now()
    const requestId = batch.id
    if (this.#config.traceContext) batch.trace = readTrace(this.#config.traceContext, ctx)
    // a replay sent by the console of this process answers with its batch, to link to it
    const replayOf = replayedEntryId(ctx.request.header(REPLAY_HEADER))
    if (replayOf) ctx.response.header(REPLAY_BATCH_HEADER, batch.id)
    try {
      return await batchStorage.run(batch, next)
    } finally {
      this.#finish(ctx, batch, requestId, started, capture, replayOf)
    }
  }

  #finish(
    ctx: HttpContext,
    batch: RecordingBatch,
    id: string,
    started: number,
    capture?: ProfileCapture,
    replayOf?: string | null
  ) {
    try {
      const durationMs = performance.now() - started
      const status = ctx.response.getStatus()
      const slow = durationMs >= this.#config.slowRequestMs
      const method = ctx.request.method()
      const path = ctx.request.url()
      const user = this.#config.resolveUser(ctx) ?? null
      const content: Record<string, unknown> = {
        method,
        path,
        route: ctx.route?.pattern ?? null,
        status,
        durationMs,
        ip: this.#ip(ctx),
        query: recordedQuery(ctx.request.qs(), this.#config),
        headers: redactHeaders(ctx.request.headers(), this.#config.redact),
        body: captureBody(ctx, this.#config),
        user,
        droppedEntries: batch.dropped,
      }
      // set only on a replay: a spread of an empty object in the literal copied it on every request
      if (replayOf) content.replayOf = replayOf
      this.#recorder.record(
        {
          id,
          type: 'request',
          summary: `${method} ${path}`.slice(0, 255),
          status,
          method,
          durationMs,
          slow,
          tags: slow || replayOf ? requestTags(slow, replayOf) : [],
          content,
        },
        batch
      )
      const failing = status >= 500 || slow
      if (!capture) return this.#recorder.commit(batch, { failing })
      // the response does not wait for the profiler to stop; the batch (always kept: someone
      // asked for this profile) is committed once the profile's entry joins it
      void this.#profiler!.finish(capture)
        .then((profile) => profile && this.#recorder.record(profile, batch))
        .finally(() => this.#recorder.commit(batch, { failing: true }))
    } catch {
      // recording never fails a request
    }
  }
}
