import type { ConsoleEntry } from '../types.ts'
import { encode, mergeEncoded, record, type Histogram } from './histogram.ts'

/** Route key of requests no route matched (404s, assets) */
export const UNMATCHED_ROUTE = '(unmatched)'
/** Longest stored route pattern: the unique key must fit MariaDB's index limit */
export const MAX_ROUTE_LENGTH = 191
/** Longest stored method, the width of the method columns */
export const MAX_METHOD_LENGTH = 10

/**
 * One minute of one route (method + route pattern): what a row of
 * `console_rollups` holds, and what a flush adds to it.
 */
export interface RouteMinute {
  /** Unix ms of the minute's start */
  minute: number
  method: string
  route: string
  requests: number
  /** Responses with a 5xx status */
  errors: number
  durationSumMs: number
  durationMaxMs: number
  /** Encoded latency histogram (see histogram.ts) */
  histogram: string
}

/** The minute (Unix ms of its start) an instant falls in */
export function minuteOf(at: number) {
  return Math.floor(at / 60_000) * 60_000
}

/** The key two flushes of one minute and route share */
export function rollupKey(row: Pick<RouteMinute, 'minute' | 'method' | 'route'>) {
  return `${row.minute} ${row.method} ${row.route}`
}

/** Ascending by minute, method, route: the order rows are locked in */
export function compareRollups(a: RouteMinute, b: RouteMinute) {
  if (a.minute !== b.minute) return a.minute - b.minute
  if (a.method !== b.method) return a.method < b.method ? -1 : 1
  return a.route < b.route ? -1 : a.route > b.route ? 1 : 0
}

/** The request entries of a flush, summed per minute and route, sorted by key */
export function rollupsOf(entries: ConsoleEntry[]): RouteMinute[] {
  const sums = new Map<string, { row: RouteMinute; histogram: Histogram }>()
  for (const entry of entries) {
    if (entry.type !== 'request') continue
    const pattern = entry.content.route
    // trailing spaces are not part of a key on MariaDB (PAD SPACE), so no key has any
    const route = (typeof pattern === 'string' && pattern.trim() ? pattern : UNMATCHED_ROUTE)
      .slice(0, MAX_ROUTE_LENGTH)
      .trimEnd()
    const method = (entry.method ?? 'GET').slice(0, MAX_METHOD_LENGTH)
    const key = { minute: minuteOf(entry.createdAt), method, route }
    const id = rollupKey(key)
    let sum = sums.get(id)
    if (!sum) {
      sum = {
        row: {
          ...key,
          requests: 0,
          errors: 0,
          durationSumMs: 0,
          durationMaxMs: 0,
          histogram: '',
        },
        histogram: new Map(),
      }
      sums.set(id, sum)
    }
    const duration = Math.max(0, entry.durationMs ?? 0)
    sum.row.requests++
    if ((entry.status ?? 0) >= 500) sum.row.errors++
    sum.row.durationSumMs += duration
    sum.row.durationMaxMs = Math.max(sum.row.durationMaxMs, duration)
    record(sum.histogram, duration)
  }
  return [...sums.values()]
    .map(({ row, histogram }) => ({ ...row, histogram: encode(histogram) }))
    .sort(compareRollups)
}

/** A stored row plus what a flush adds: counts and buckets add up, the maximum is kept */
export function addRollup(stored: RouteMinute, added: RouteMinute): RouteMinute {
  return {
    minute: stored.minute,
    method: stored.method,
    route: stored.route,
    requests: stored.requests + added.requests,
    errors: stored.errors + added.errors,
    durationSumMs: stored.durationSumMs + added.durationSumMs,
    durationMaxMs: Math.max(stored.durationMaxMs, added.durationMaxMs),
    histogram: mergeEncoded(stored.histogram, added.histogram),
  }
}
