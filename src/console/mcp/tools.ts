import stringHelpers from '@adonisjs/core/helpers/string'
import { ConsoleInvalidQueryException, ConsoleNotFoundException } from '../errors.ts'
import { parseListQuery } from '../http/entries_controller.ts'
import { idAtTime, isEntryId } from '../ids.ts'
import type { ConsoleManager } from '../manager.ts'
import { exceptionFamilies, MAX_EXCEPTIONS_SCANNED, MAX_PULSE_ROUTES, pulseOf } from '../pulse.ts'
import type { ConsoleEntry, ConsoleEntrySummary, EntryType } from '../types.ts'
import { redactEntry, summaryOf } from './output.ts'

/** Most summaries one search returns; the API's own page cap is higher, a model's context is not */
export const MAX_SEARCH_RESULTS = 100
/** Summaries a search returns when `limit` is absent */
export const DEFAULT_SEARCH_RESULTS = 20
/** Most entries of one batch handed out whole */
export const MAX_BATCH_ENTRIES = 200
/** Most queries and logs of the failing batch a diagnosis carries */
export const MAX_DIAGNOSIS_ENTRIES = 50
/** Logs recorded this close to an exception, outside its batch, are listed as nearby */
const NEARBY_MS = 30_000
const NEARBY_LOGS = 20

/**
 * An instant of a time window: an ISO 8601 date, or a duration ago
 * (`15m`, `2h`, `7d`). Anything else is an error naming the input.
 */
export function parseInstant(value: string, name: string, now = Date.now()): number {
  const text = value.trim()
  if (/^\d+(\.\d+)?\s*[a-z]+$/i.test(text)) {
    let ms = Number.NaN
    try {
      ms = stringHelpers.milliseconds.parse(text)
    } catch {}
    // a duration past what a Date can hold (99999999999999y) names the input, not "Invalid time value"
    if (Number.isFinite(ms) && ms >= 0 && Number.isFinite(new Date(now - ms).getTime())) {
      return now - ms
    }
  } else if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const ms = Date.parse(text)
    if (Number.isFinite(ms)) return ms
  }
  throw new ConsoleInvalidQueryException(
    `"${name}" must be an ISO date (2026-01-31T12:00:00Z) or a duration ago such as 15m, 2h or 7d`,
    name
  )
}

/** What `search_entries` accepts */
export interface SearchInput {
  /** Built-in types or an extension's: the tool's schema lists the allowed ones */
  types?: string[]
  query?: string
  since?: string
  until?: string
  status?: string
  slow?: boolean
  limit?: number
}

/**
 * Entry summaries of the chosen types in a time window, newest first,
 * optionally matching words (the store's search) and a status. One keyset
 * read per type, merged.
 */
export async function searchEntries(manager: ConsoleManager, input: SearchInput) {
  const now = Date.now()
  const since = parseInstant(input.since ?? '1h', 'since', now)
  const until = input.until === undefined ? undefined : parseInstant(input.until, 'until', now)
  if (until !== undefined && until < since) {
    throw new ConsoleInvalidQueryException('"until" must not be before "since"', 'until')
  }
  const limit = Math.min(input.limit ?? DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS)
  // the API's own checks, so both exits accept and refuse the same filters
  const filters = parseListQuery(undefined, {
    q: input.query,
    status: input.status,
    slow: input.slow === undefined ? undefined : String(input.slow),
    limit: String(limit),
  })
  filters.since = idAtTime(since)
  if (until !== undefined) filters.before = idAtTime(until + 1)
  const types: Array<EntryType | undefined> = input.types?.length
    ? [...new Set(input.types as EntryType[])]
    : [undefined]
  const pages = await Promise.all(types.map((type) => manager.store.list({ ...filters, type })))
  const merged = pages.flatMap((page) => page.data).sort((a, b) => (a.id < b.id ? 1 : -1))
  const bounds = manager.config.redact
  return {
    window: {
      since: new Date(since).toISOString(),
      until: new Date(until ?? now).toISOString(),
    },
    count: Math.min(merged.length, limit),
    more: merged.length > limit || pages.some((page) => page.nextCursor !== null),
    entries: merged.slice(0, limit).map((entry) => summaryOf(entry, bounds)),
  }
}

function entryIdOf(id: string, name: string) {
  if (!isEntryId(id)) {
    throw new ConsoleInvalidQueryException(`"${name}" must be a 24-digit hex entry id`, name)
  }
  return id
}

/** Every entry one request (or one job) recorded, oldest first, redacted */
export async function getBatch(manager: ConsoleManager, input: { id: string }) {
  const id = entryIdOf(input.id, 'id')
  const entries = await manager.store.batch(id)
  if (entries.length === 0) throw new ConsoleNotFoundException(`Batch ${id} not found`)
  const bounds = manager.config.redact
  return {
    id,
    entries: entries.slice(0, MAX_BATCH_ENTRIES).map((entry) => redactEntry(entry, bounds)),
    omitted: Math.max(0, entries.length - MAX_BATCH_ENTRIES),
  }
}

/** The health view: the recorder's state and the pulse of the last `minutes` */
export async function getStats(
  manager: ConsoleManager,
  input: { minutes?: number; routes?: number }
) {
  const { config, store } = manager
  const pulse = await pulseOf(store, config.pulse, input.minutes ?? config.pulse.windowMinutes)
  return {
    recorder: manager.recorderState(),
    ...pulse,
    routes: pulse.routes.slice(0, Math.min(input.routes ?? 20, MAX_PULSE_ROUTES)),
    routeCount: pulse.routes.length,
  }
}

const ofType = (entries: ConsoleEntry[], type: EntryType) =>
  entries.filter((entry) => entry.type === type)

/**
 * What an assistant needs to explain an exception: the entry, how often its
 * family (same class, message up to numbers and ids) occurred in the
 * window, the request it broke with that request's queries and logs, and
 * logs recorded around it by other requests.
 */
export async function diagnoseException(
  manager: ConsoleManager,
  input: { id: string; familyWindow?: string }
) {
  const id = entryIdOf(input.id, 'id')
  const entry = await manager.store.find(id)
  if (!entry || entry.type !== 'exception') {
    throw new ConsoleNotFoundException(`Exception ${id} not found`)
  }
  const now = Date.now()
  const from = parseInstant(input.familyWindow ?? '24h', 'familyWindow', now)
  const [recent, batch, around] = await Promise.all([
    manager.store.list({ type: 'exception', since: idAtTime(from), limit: MAX_EXCEPTIONS_SCANNED }),
    manager.store.batch(entry.batchId),
    manager.store.list({
      type: 'log',
      since: idAtTime(entry.createdAt - NEARBY_MS),
      before: idAtTime(entry.createdAt + NEARBY_MS + 1),
      limit: NEARBY_LOGS + MAX_DIAGNOSIS_ENTRIES,
    }),
  ])
  const fingerprint = exceptionFamilies([entry])[0].fingerprint
  const family = exceptionFamilies(recent.data).find((each) => each.fingerprint === fingerprint)
  const bounds = manager.config.redact
  const full = (entries: ConsoleEntry[]) =>
    entries.slice(0, MAX_DIAGNOSIS_ENTRIES).map((each) => redactEntry(each, bounds))
  const request = batch.find((each) => each.type === 'request')
  const nearby = around.data.filter((each: ConsoleEntrySummary) => each.batchId !== entry.batchId)
  return {
    exception: redactEntry(entry, bounds),
    family: {
      fingerprint,
      class: family?.class ?? null,
      message: family?.message ?? null,
      window: { since: new Date(from).toISOString(), until: new Date(now).toISOString() },
      // the exception may be older than the window: then it is not counted in it
      count: family?.count ?? 0,
      lastSeenAt: family ? new Date(family.lastSeenAt).toISOString() : null,
      lastId: family?.lastId ?? null,
      // more exceptions than were scanned: the count is a lower bound
      countIsLowerBound: recent.nextCursor !== null,
    },
    request: request ? redactEntry(request, bounds) : null,
    queries: full(ofType(batch, 'query')),
    logs: full(ofType(batch, 'log')),
    otherExceptions: ofType(batch, 'exception')
      .filter((each) => each.id !== entry.id)
      .map((each) => summaryOf(each, bounds)),
    nearbyLogs: nearby.slice(0, NEARBY_LOGS).map((each) => summaryOf(each, bounds)),
  }
}
