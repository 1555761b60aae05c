import type { Logger } from '@adonisjs/core/logger'
import { durationMs, fail, FILE } from '../config_checks.ts'
import type { ConsoleStore } from '../stores/contract.ts'
import type { Duration } from '../types.ts'

/** One notification: a rule started firing, or stopped */
export interface ConsoleAlert {
  status: 'firing' | 'resolved'
  /** The rule's name (unique in config/console.ts) */
  rule: string
  kind: AlertRuleKind
  /** What fired: an exception family, a route, a job, the whole app */
  subject: string
  /** One line for people: what crossed which threshold over which window */
  summary: string
  value: number
  threshold: number
  windowMs: number
  /** When this incident began (ISO) */
  startedAt: string
  /** When this notification was made (ISO) */
  at: string
  /** The dashboard screen to open, when `alerts.dashboardUrl` is set */
  url: string | null
  details: Record<string, unknown>
}

/** Where alerts go: anything with a name and a `send` */
export interface AlertChannel {
  name: string
  send(alert: ConsoleAlert, context: { logger?: Logger }): Promise<void> | void
}

/** What a rule found over its window: one finding per subject whose condition holds */
export interface AlertFinding {
  /** Tells subjects of one rule apart (a family, a route); the subject by default */
  key?: string
  subject: string
  value: number
  threshold: number
  summary: string
  /** The entry to open in the dashboard */
  entryId?: string
  details?: Record<string, unknown>
}

/** What a custom rule's `check` receives */
export interface AlertCheckContext {
  store: ConsoleStore
  /** The evaluation's instant, Unix ms */
  now: number
  /** Start of the rule's window, Unix ms */
  since: number
}

export type AlertRuleKind = 'exceptions' | 'slow_routes' | 'error_rate' | 'job_failures' | 'custom'

/** What the `alertRules` builders return; checked by `defineConfig` */
export interface AlertRuleDescriptor {
  kind: AlertRuleKind
  name?: string
  within?: Duration
  cooldown?: Duration
  over?: number
  p99Ms?: number
  minRequests?: number
  route?: string
  class?: string
  job?: string
  check?: (context: AlertCheckContext) => AlertFinding[] | Promise<AlertFinding[]>
}

/** A rule with its defaults applied */
export interface ResolvedAlertRule extends AlertRuleDescriptor {
  name: string
  withinMs: number
  cooldownMs: number
  threshold: number
  minRequests: number
}

/** `alerts` in config/console.ts */
export interface AlertsOptions {
  channels: AlertChannel[]
  rules: AlertRuleDescriptor[]
  /** ms between evaluations, 60000 by default */
  intervalMs?: number
  /** Least time between two "firing" notifications of one rule and subject, `'30m'` by default */
  cooldown?: Duration
  /** Send a "resolved" notification when a notified incident ends; true by default */
  resolved?: boolean
  /** The console page's public URL (`https://app.example.com/console`), for links in alerts */
  dashboardUrl?: string
}

export interface ResolvedAlerts {
  channels: AlertChannel[]
  rules: ResolvedAlertRule[]
  intervalMs: number
  resolved: boolean
  dashboardUrl: string | null
}

const MINUTE = 60_000
const MAX_WINDOW_MS = 24 * 60 * MINUTE
const DEFAULT_NAMES: Record<AlertRuleKind, string> = {
  exceptions: 'exceptions',
  slow_routes: 'slow-routes',
  error_rate: 'error-rate',
  job_failures: 'job-failures',
  custom: 'custom',
}

/** Rules for `alerts.rules`; each fires per subject and is quiet for its cooldown */
export const alertRules = {
  /** More than `over` exceptions of one family (class and normalised message) within the window */
  exceptions(options: {
    over: number
    within?: Duration
    class?: string
    name?: string
    cooldown?: Duration
  }): AlertRuleDescriptor {
    return { kind: 'exceptions', ...options }
  },
  /** A route whose p99 is over `p99Ms` within the window, once it served `minRequests` (10) */
  slowRoutes(options: {
    p99Ms: number
    within?: Duration
    route?: string
    minRequests?: number
    name?: string
    cooldown?: Duration
  }): AlertRuleDescriptor {
    return { kind: 'slow_routes', ...options }
  },
  /** A share of 5xx answers over `over` (0 to 1), of the app or one `route`, after `minRequests` (20) */
  errorRate(options: {
    over: number
    within?: Duration
    route?: string
    minRequests?: number
    name?: string
    cooldown?: Duration
  }): AlertRuleDescriptor {
    return { kind: 'error_rate', ...options }
  },
  /** More than `over` failed jobs (executions or dispatches) of one job within the window */
  jobFailures(options: {
    over: number
    within?: Duration
    job?: string
    name?: string
    cooldown?: Duration
  }): AlertRuleDescriptor {
    return { kind: 'job_failures', ...options }
  },
  /** Your own condition: `check` returns a finding per subject that should fire */
  custom(options: {
    name: string
    check: NonNullable<AlertRuleDescriptor['check']>
    within?: Duration
    cooldown?: Duration
  }): AlertRuleDescriptor {
    return { kind: 'custom', ...options }
  },
}

function positiveNumber(value: unknown, key: string, max = Number.MAX_SAFE_INTEGER) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > max) {
    fail(`Invalid "${key}" in ${FILE}: use a number from 0 to ${max}`)
  }
  return value
}

function resolveRule(
  rule: AlertRuleDescriptor,
  index: number,
  cooldownMs: number
): ResolvedAlertRule {
  const at = `alerts.rules[${index}]`
  if (!rule || typeof rule !== 'object' || !(rule.kind in DEFAULT_NAMES)) {
    fail(
      `Invalid "${at}" in ${FILE}: build each rule with alertRules (exceptions, slowRoutes, errorRate, jobFailures, custom)`
    )
  }
  const name = rule.name ?? DEFAULT_NAMES[rule.kind]
  if (typeof name !== 'string' || !/^[\w.:-]{1,64}$/.test(name)) {
    fail(`Invalid "${at}.name" in ${FILE}: use 1 to 64 letters, digits, "_", ".", ":" or "-"`)
  }
  const withinMs = durationMs(rule.within ?? '5m', `${at}.within`)
  if (withinMs < MINUTE || withinMs > MAX_WINDOW_MS) {
    fail(`Invalid "${at}.within" in ${FILE}: use a window from '1m' to '24h'`)
  }
  let threshold = 0
  if (rule.kind === 'slow_routes') threshold = positiveNumber(rule.p99Ms, `${at}.p99Ms`)
  else if (rule.kind === 'error_rate') threshold = positiveNumber(rule.over, `${at}.over`, 1)
  else if (rule.kind !== 'custom') threshold = positiveNumber(rule.over, `${at}.over`)
  if (rule.kind === 'custom' && typeof rule.check !== 'function') {
    fail(`Invalid "${at}.check" in ${FILE}: use a function returning the findings that should fire`)
  }
  const fallbackMinimum = rule.kind === 'error_rate' ? 20 : rule.kind === 'slow_routes' ? 10 : 0
  const minRequests =
    rule.minRequests === undefined
      ? fallbackMinimum
      : positiveNumber(rule.minRequests, `${at}.minRequests`)
  if (
    rule.route !== undefined &&
    (typeof rule.route !== 'string' || !/^[A-Z]+ \//.test(rule.route))
  ) {
    fail(
      `Invalid "${at}.route" in ${FILE}: use a method and route pattern, such as 'GET /users/:id'`
    )
  }
  return {
    ...rule,
    name,
    withinMs,
    cooldownMs:
      rule.cooldown === undefined ? cooldownMs : durationMs(rule.cooldown, `${at}.cooldown`),
    threshold,
    minRequests,
  }
}

function resolveChannel(channel: AlertChannel, index: number) {
  if (!channel || typeof channel !== 'object' || typeof channel.send !== 'function') {
    fail(
      `Invalid "alerts.channels[${index}]" in ${FILE}: use alertChannels.webhook({ url }), alertChannels.log() or { name, send(alert) }`
    )
  }
  if (typeof channel.name !== 'string' || channel.name.length === 0) {
    fail(`Invalid "alerts.channels[${index}].name" in ${FILE}: give each channel a name`)
  }
  return channel
}

/** Checks `alerts` in config/console.ts; false when there is none */
export function resolveAlerts(options: AlertsOptions | undefined | false): ResolvedAlerts | false {
  if (options === undefined || options === false) return false
  if (options === null || typeof options !== 'object') {
    fail(`Invalid "alerts" in ${FILE}: use { channels: [...], rules: [...] }`)
  }
  if (!Array.isArray(options.channels) || options.channels.length === 0) {
    fail(
      `Missing "alerts.channels" in ${FILE}: add alertChannels.webhook({ url }) or alertChannels.log()`
    )
  }
  if (!Array.isArray(options.rules) || options.rules.length === 0) {
    fail(
      `Missing "alerts.rules" in ${FILE}: add a rule such as alertRules.exceptions({ over: 10, within: '5m' })`
    )
  }
  const channels = options.channels.map(resolveChannel)
  const channelNames = new Set(channels.map((channel) => channel.name))
  if (channelNames.size !== channels.length) {
    fail(`Two "alerts.channels" in ${FILE} share a name: give each its own "name"`)
  }
  const cooldownMs = durationMs(options.cooldown ?? '30m', 'alerts.cooldown')
  const rules = options.rules.map((rule, index) => resolveRule(rule, index, cooldownMs))
  const seen = new Set<string>()
  for (const [index, rule] of rules.entries()) {
    if (seen.has(rule.name)) {
      fail(
        `"alerts.rules[${index}]" in ${FILE} is named "${rule.name}" like an earlier rule: give it its own "name"`
      )
    }
    seen.add(rule.name)
  }
  const intervalMs = options.intervalMs ?? 60_000
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 1000) {
    fail(`Invalid "alerts.intervalMs" in ${FILE}: use a whole number of milliseconds, 1000 or more`)
  }
  let dashboardUrl: string | null = null
  if (options.dashboardUrl !== undefined) {
    const url = URL.canParse(options.dashboardUrl) ? new URL(options.dashboardUrl) : null
    if (!url || !['http:', 'https:'].includes(url.protocol)) {
      fail(
        `Invalid "alerts.dashboardUrl" in ${FILE}: use the console page's absolute URL, such as 'https://app.example.com/console'`
      )
    }
    dashboardUrl = options.dashboardUrl.replace(/\/+$/, '')
  }
  return { channels, rules, intervalMs, resolved: options.resolved ?? true, dashboardUrl }
}
