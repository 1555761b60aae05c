import { idAtTime } from '../ids.ts'
import { exceptionFamilies, MAX_EXCEPTIONS_SCANNED, trafficOf } from '../pulse.ts'
import { minuteOf } from '../rollups/route_minute.ts'
import type { ConsoleStore } from '../stores/contract.ts'
import type { AlertFinding, ResolvedAlertRule } from './config.ts'

const round = (value: number) => Math.round(value * 1000) / 1000

function windowText(ms: number) {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 60_000)} min`
}

/** Families of the window's exceptions (the newest 1000, as the health page groups them) */
async function exceptionFindings(store: ConsoleStore, rule: ResolvedAlertRule, since: number) {
  const page = await store.list({
    type: 'exception',
    since: idAtTime(since),
    limit: MAX_EXCEPTIONS_SCANNED,
  })
  return exceptionFamilies(page.data)
    .filter((family) => family.count > rule.threshold)
    .filter((family) => !rule.class || family.class === rule.class)
    .map<AlertFinding>((family) => ({
      key: family.fingerprint,
      subject: `${family.class}: ${family.message}`,
      value: family.count,
      threshold: rule.threshold,
      summary: `${family.count} × ${family.class}: ${family.message} in ${windowText(rule.withinMs)} (more than ${rule.threshold})`,
      entryId: family.lastId,
      details: {
        fingerprint: family.fingerprint,
        class: family.class,
        message: family.message,
        lastSeenAt: new Date(family.lastSeenAt).toISOString(),
        countIsLowerBound: page.nextCursor !== null,
      },
    }))
}

/** Routes of the window from the per-minute rollups, the current minute included */
async function routesOf(store: ConsoleStore, rule: ResolvedAlertRule, now: number) {
  const minutes = Math.ceil(rule.withinMs / 60_000)
  const toMinute = minuteOf(now) + 60_000
  const fromMinute = toMinute - minutes * 60_000
  const { routes } = trafficOf(await store.rollups(fromMinute, toMinute), fromMinute, minutes)
  return rule.route
    ? routes.filter((route) => `${route.method} ${route.route}` === rule.route)
    : routes
}

async function slowRouteFindings(store: ConsoleStore, rule: ResolvedAlertRule, now: number) {
  const routes = await routesOf(store, rule, now)
  return routes
    .filter((route) => route.requests >= rule.minRequests && route.p99Ms !== null)
    .filter((route) => route.p99Ms! > rule.threshold)
    .map<AlertFinding>((route) => {
      const subject = `${route.method} ${route.route}`
      return {
        subject,
        value: route.p99Ms!,
        threshold: rule.threshold,
        summary: `${subject} p99 ${route.p99Ms} ms over ${route.requests} requests in ${windowText(rule.withinMs)} (more than ${rule.threshold} ms)`,
        details: { ...route },
      }
    })
}

async function errorRateFindings(store: ConsoleStore, rule: ResolvedAlertRule, now: number) {
  const routes = await routesOf(store, rule, now)
  const requests = routes.reduce((sum, route) => sum + route.requests, 0)
  const errors = routes.reduce((sum, route) => sum + route.errors, 0)
  if (requests === 0 || requests < rule.minRequests) return []
  const rate = round(errors / requests)
  if (rate <= rule.threshold) return []
  const subject = rule.route ?? 'all routes'
  return [
    {
      subject,
      value: rate,
      threshold: rule.threshold,
      summary: `${subject}: ${errors} of ${requests} requests answered 5xx (${round(rate * 100)}%) in ${windowText(rule.withinMs)} (more than ${round(rule.threshold * 100)}%)`,
      details: { requests, errors },
    },
  ]
}

/** Failed executions and dispatches, by job name (the second word of `job SendInvoice failed`) */
async function jobFailureFindings(store: ConsoleStore, rule: ResolvedAlertRule, since: number) {
  const page = await store.list({
    type: 'job',
    tag: 'failed',
    since: idAtTime(since),
    limit: MAX_EXCEPTIONS_SCANNED,
  })
  const byJob = new Map<string, { count: number; lastId: string }>()
  for (const entry of page.data) {
    const name = entry.summary.split(' ')[1] ?? 'unknown'
    const seen = byJob.get(name)
    if (seen) seen.count++
    else byJob.set(name, { count: 1, lastId: entry.id })
  }
  return [...byJob]
    .filter(([name, { count }]) => count > rule.threshold && (!rule.job || rule.job === name))
    .map<AlertFinding>(([name, { count, lastId }]) => ({
      subject: name,
      value: count,
      threshold: rule.threshold,
      summary: `${count} failed ${name} jobs in ${windowText(rule.withinMs)} (more than ${rule.threshold})`,
      entryId: lastId,
      details: { job: name, countIsLowerBound: page.nextCursor !== null },
    }))
}

/** What a rule finds over its window ending at `now`: one finding per subject that fires */
export async function findingsOf(
  store: ConsoleStore,
  rule: ResolvedAlertRule,
  now: number
): Promise<AlertFinding[]> {
  const since = now - rule.withinMs
  switch (rule.kind) {
    case 'exceptions':
      return exceptionFindings(store, rule, since)
    case 'slow_routes':
      return slowRouteFindings(store, rule, now)
    case 'error_rate':
      return errorRateFindings(store, rule, now)
    case 'job_failures':
      return jobFailureFindings(store, rule, since)
    case 'custom':
      return (await rule.check!({ store, now, since })) ?? []
  }
}
