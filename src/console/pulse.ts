import { createHash } from 'node:crypto'
import { idAtTime } from './ids.ts'
import { addEncoded, quantile, type Histogram } from './rollups/histogram.ts'
import { minuteOf, type RouteMinute } from './rollups/route_minute.ts'
import type { ConsoleStore } from './stores/contract.ts'
import type { ConsoleEntrySummary, ResolvedPulse } from './types.ts'

/** Most `minutes` a health request may ask for: one day of rollups */
export const MAX_PULSE_MINUTES = 1440
/** Routes listed, busiest first */
export const MAX_PULSE_ROUTES = 200
/** Newest exception entries of the window grouped into families */
export const MAX_EXCEPTIONS_SCANNED = 1000

/** One route over the window, from its merged histograms */
export interface RoutePulse {
  method: string
  route: string
  requests: number
  errors: number
  avgMs: number | null
  p50Ms: number | null
  p99Ms: number | null
  maxMs: number
}

/** Exceptions of one class whose messages differ only in numbers, ids and quoted values */
export interface ExceptionFamily {
  fingerprint: string
  class: string
  message: string
  count: number
  lastSeenAt: number
  lastId: string
}

/** A route's rows added up over the window */
interface RouteSum {
  method: string
  route: string
  requests: number
  errors: number
  maxMs: number
  sumMs: number
  histogram: Histogram
}

const round = (value: number) => Math.round(value * 100) / 100

/** Traffic of the window: a per-minute series, totals, and each route's percentiles */
export function trafficOf(rows: RouteMinute[], fromMinute: number, minutes: number) {
  const series = Array.from({ length: minutes }, (_, index) => ({
    minute: fromMinute + index * 60_000,
    requests: 0,
    errors: 0,
  }))
  const routes = new Map<string, RouteSum>()
  for (const row of rows) {
    const slot = series[(row.minute - fromMinute) / 60_000]
    if (slot) {
      slot.requests += row.requests
      slot.errors += row.errors
    }
    const key = `${row.method} ${row.route}`
    let sum = routes.get(key)
    if (!sum) {
      sum = {
        method: row.method,
        route: row.route,
        requests: 0,
        errors: 0,
        maxMs: 0,
        sumMs: 0,
        histogram: new Map(),
      }
      routes.set(key, sum)
    }
    sum.requests += row.requests
    sum.errors += row.errors
    sum.maxMs = Math.max(sum.maxMs, row.durationMaxMs)
    sum.sumMs += row.durationSumMs
    addEncoded(sum.histogram, row.histogram)
  }
  const perRoute: RoutePulse[] = [...routes.values()].map((sum) => ({
    method: sum.method,
    route: sum.route,
    requests: sum.requests,
    errors: sum.errors,
    avgMs: sum.requests ? round(sum.sumMs / sum.requests) : null,
    p50Ms: quantile(sum.histogram, 0.5),
    p99Ms: quantile(sum.histogram, 0.99),
    maxMs: round(sum.maxMs),
  }))
  perRoute.sort((a, b) => b.requests - a.requests || (a.route < b.route ? -1 : 1))
  const requests = series.reduce((sum, slot) => sum + slot.requests, 0)
  const errors = series.reduce((sum, slot) => sum + slot.errors, 0)
  return {
    throughput: { requests, errors, perMinute: round(requests / minutes), series },
    routes: perRoute,
  }
}

/**
 * A message with its variable parts replaced, so `User 12 not found` and
 * `User 40 not found` are one family: quoted values, UUIDs, long hex ids,
 * emails and numbers.
 */
export function normaliseMessage(message: string) {
  return message
    .replace(/"[^"]*"|'[^']*'|`[^`]*`/g, '?')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/\b[0-9a-f]{12,}\b/gi, '<hex>')
    .replace(/[\w.+-]+@[\w-]+\.[\w.-]+/g, '<email>')
    .replace(/\d+(\.\d+)?/g, '<n>')
    .trim()
}

/** Exception summaries (`Class: message`, newest first) grouped into families, most frequent first */
export function exceptionFamilies(summaries: ConsoleEntrySummary[]): ExceptionFamily[] {
  const families = new Map<string, ExceptionFamily>()
  for (const entry of summaries) {
    const separator = entry.summary.indexOf(': ')
    const className = separator > 0 ? entry.summary.slice(0, separator) : 'Error'
    const message = normaliseMessage(
      separator > 0 ? entry.summary.slice(separator + 2) : entry.summary
    )
    const fingerprint = createHash('sha1')
      .update(`${className}\n${message}`)
      .digest('hex')
      .slice(0, 12)
    const family = families.get(fingerprint)
    if (family) {
      family.count++
      continue
    }
    families.set(fingerprint, {
      fingerprint,
      class: className,
      message,
      count: 1,
      lastSeenAt: entry.createdAt,
      lastId: entry.id,
    })
  }
  return [...families.values()].sort((a, b) => b.count - a.count || b.lastSeenAt - a.lastSeenAt)
}

/** How long the stored-row counts of a health answer are reused */
export const ROW_COUNTS_TTL_MS = 30_000

const rowCounts = new WeakMap<
  ConsoleStore,
  { at: number; counting: ReturnType<ConsoleStore['countRows']> }
>()

/**
 * The store's row counts, counted at most once per `ROW_COUNTS_TTL_MS`:
 * counting is an index scan that grows with the table, and a health screen
 * polls. Concurrent health requests share one count; a failed count is not kept.
 */
export function cachedRowCounts(store: ConsoleStore, now = Date.now()) {
  const cached = rowCounts.get(store)
  if (cached && now - cached.at < ROW_COUNTS_TTL_MS) {
    return cached.counting.then((counts) => ({ ...counts, countedAt: cached.at }))
  }
  const counting = store.countRows()
  rowCounts.set(store, { at: now, counting })
  counting.catch(() => rowCounts.delete(store))
  return counting.then((counts) => ({ ...counts, countedAt: now }))
}

/** Drops the cached counts: a prune just changed them, and the dashboard reads them again */
export function forgetRowCounts(store: ConsoleStore) {
  rowCounts.delete(store)
}

/**
 * The health snapshot of the last `minutes` (the current minute included):
 * throughput and route latencies from the rollups, slow routes by their
 * p99, exception families from the newest exception entries of the window
 * (an indexed keyset read), and the stored row counts.
 */
export async function pulseOf(
  store: ConsoleStore,
  options: ResolvedPulse,
  minutes: number,
  now = Date.now()
) {
  const toMinute = minuteOf(now) + 60_000
  const fromMinute = toMinute - minutes * 60_000
  const [rows, exceptions, storage] = await Promise.all([
    store.rollups(fromMinute, toMinute),
    store.list({ type: 'exception', since: idAtTime(fromMinute), limit: MAX_EXCEPTIONS_SCANNED }),
    cachedRowCounts(store, now),
  ])
  const { throughput, routes } = trafficOf(rows, fromMinute, minutes)
  return {
    window: { minutes, from: fromMinute, to: toMinute },
    throughput,
    routes: routes.slice(0, MAX_PULSE_ROUTES),
    slowRoutes: routes
      .filter((route) => route.p99Ms !== null && route.p99Ms >= options.slowRouteMs)
      .sort((a, b) => b.p99Ms! - a.p99Ms!)
      .map(({ method, route, requests, p99Ms }) => ({ method, route, requests, p99Ms })),
    exceptions: {
      families: exceptionFamilies(exceptions.data),
      scanned: exceptions.data.length,
      truncated: exceptions.nextCursor !== null,
    },
    storage,
  }
}
