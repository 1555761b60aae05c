import type { HttpContext } from '@adonisjs/core/http'
import { ConsoleInvalidQueryException, ConsoleNotFoundException } from '../errors.ts'
import { isEntryId } from '../ids.ts'
import { findEntry } from './find_entry.ts'
import { withoutRawProfile } from '../profiling/profiles_controller.ts'
import type { ConsoleManager } from '../manager.ts'
import type { EntryListQuery } from '../stores/contract.ts'
import { forgetRowCounts } from '../pulse.ts'
import { MAX_SEARCH_LENGTH, searchWords } from '../search.ts'
import { traceUrl, type TraceIds } from '../trace_context.ts'
import { ENTRY_TYPES, type ConsoleEntry, type EntryType } from '../types.ts'

const DEFAULT_LIMIT = 50
const MAX_LIMIT = 200
const TAG = /^[A-Za-z0-9:.-]{1,64}$/
const METHOD = /^[A-Z]{3,10}$/

function invalid(parameter: string, message: string): never {
  throw new ConsoleInvalidQueryException(message, parameter)
}

/** Reads and checks a list request's query string; `type` undefined lists every type */
export function parseListQuery(
  type: EntryType | undefined,
  qs: Record<string, unknown>
): EntryListQuery {
  const one = (name: string) => {
    const value = qs[name]
    if (value === undefined || value === '') return undefined
    if (typeof value !== 'string') invalid(name, `"${name}" must be given once`)
    return value
  }
  const query: EntryListQuery = { type, limit: DEFAULT_LIMIT }
  const limit = one('limit')
  if (limit !== undefined) {
    // digits only: Number() would also read "0x10", "1e2" and " 5"
    const value = /^\d{1,3}$/.test(limit) ? Number(limit) : Number.NaN
    if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT) {
      invalid('limit', `"limit" must be a whole number from 1 to ${MAX_LIMIT}`)
    }
    query.limit = value
  }
  const before = one('before')
  if (before !== undefined) {
    if (!isEntryId(before)) invalid('before', '"before" must be an entry id from nextCursor')
    query.before = before
  }
  const status = one('status')
  if (status !== undefined) {
    const byClass = /^([1-5])xx$/i.exec(status)
    if (byClass) query.statusClass = Number(byClass[1])
    else if (/^[1-5]\d\d$/.test(status)) query.status = Number(status)
    else invalid('status', '"status" must be a status code such as 404 or a class such as 5xx')
  }
  const method = one('method')?.toUpperCase()
  if (method !== undefined) {
    if (!METHOD.test(method)) invalid('method', '"method" must be an HTTP method such as GET')
    query.method = method
  }
  const tag = one('tag')
  if (tag !== undefined) {
    if (!TAG.test(tag)) invalid('tag', '"tag" must be 1 to 64 letters, digits, ":", "." or "-"')
    query.tag = tag
  }
  const slow = one('slow')
  if (slow !== undefined) {
    if (!['1', 'true', '0', 'false'].includes(slow)) invalid('slow', '"slow" must be true or false')
    query.slow = slow === '1' || slow === 'true'
  }
  const q = one('q')
  if (q !== undefined) {
    if (q.length > MAX_SEARCH_LENGTH) {
      invalid('q', `"q" must be at most ${MAX_SEARCH_LENGTH} characters`)
    }
    const words = searchWords(q)
    if (words.length === 0) invalid('q', '"q" must contain a letter or a digit')
    query.words = words
  }
  return query
}

/**
 * An entry as the API answers it: with `trace` (its ids and, with
 * `traceLink`, the URL to open) when its batch had a trace
 */
export function withTraceLink(entry: ConsoleEntry, template: string | undefined) {
  const trace = entry.content.trace as TraceIds | undefined
  if (!trace || typeof trace !== 'object' || typeof trace.traceId !== 'string') return entry
  return { ...entry, trace: { ...trace, url: traceUrl(template, trace) } }
}

/**
 * The read API (lists of summaries, an entry, a batch) and its mutations
 * (prune now). Gates run before these handlers; mutations also ask
 * `authorizeAction`.
 */
export class EntriesController {
  #manager: ConsoleManager

  constructor(manager: ConsoleManager) {
    this.#manager = manager
  }

  list(type: EntryType) {
    return async (ctx: HttpContext) => {
      return this.#manager.store.list(parseListQuery(type, ctx.request.qs()))
    }
  }

  /** `GET /search?q=`: every type unless `type` names one; otherwise a list */
  search = async (ctx: HttpContext) => {
    const qs = ctx.request.qs()
    const type = qs.type
    const types = [...ENTRY_TYPES, ...this.#manager.config.customEntryTypes]
    if (type !== undefined && !types.includes(type)) {
      invalid('type', `"type" must be one of ${types.join(', ')}`)
    }
    const query = parseListQuery(type as EntryType | undefined, qs)
    if (!query.words) invalid('q', '"q" is required')
    return this.#manager.store.list(query)
  }

  show = async (ctx: HttpContext) => {
    const entry = await findEntry(this.#manager.store, ctx.params.id)
    return { data: withTraceLink(withoutRawProfile(entry), this.#manager.config.traceLink) }
  }

  batch = async (ctx: HttpContext) => {
    const id = ctx.params.id
    if (!isEntryId(id)) invalid('id', '"id" must be a batch id')
    const entries = await this.#manager.store.batch(id)
    if (entries.length === 0) throw new ConsoleNotFoundException(`Batch ${id} not found`)
    const link = this.#manager.config.traceLink
    return {
      data: { id, entries: entries.map((entry) => withTraceLink(withoutRawProfile(entry), link)) },
    }
  }

  prune = async (ctx: HttpContext) => {
    await this.#manager.gates.authorizeAction(ctx, 'prune')
    await this.#manager.recorder.flush()
    const deleted = await this.#manager.prune()
    forgetRowCounts(this.#manager.store)
    return { data: { deleted } }
  }
}
