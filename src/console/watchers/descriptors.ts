import { fail, FILE, positiveInteger } from '../config_checks.ts'
import type { WatcherDescriptor } from '../types.ts'
import type { EventNamePattern } from './event_watcher.ts'

/** Largest `watchers.events.maxPayloadBytes`: an entry stays a row, not a blob */
const MAX_EVENT_PAYLOAD_BYTES = 1024 * 1024

function namePatterns(value: unknown, key: string): EventNamePattern[] | undefined {
  if (value === undefined) return undefined
  if (
    !Array.isArray(value) ||
    !value.every(
      (pattern) => (typeof pattern === 'string' && pattern.length > 0) || pattern instanceof RegExp
    )
  ) {
    fail(
      `Invalid "${key}" in ${FILE}: use a list of event names ('order:placed', 'order:*') or RegExps`
    )
  }
  return [...value]
}

/**
 * Watchers beyond the request and exception watchers (which are always on).
 */
export const watchers = {
  /**
   * Lucid queries, from the query events of each watched connection's knex
   * instance (all connections unless listed).
   */
  queries(options: { slowMs?: number; connections?: string[] } = {}): WatcherDescriptor {
    return {
      name: 'queries',
      options: {
        slowMs: positiveInteger(options.slowMs, 'watchers.queries.slowMs', 100),
        connections: options.connections,
      },
    }
  },
  /**
   * Log lines written through the Adonis logger, at or above `level` ('info' by default).
   */
  logs(
    options: { level?: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' } = {}
  ): WatcherDescriptor {
    const level = options.level ?? 'info'
    if (!['trace', 'debug', 'info', 'warn', 'error', 'fatal'].includes(level)) {
      fail(`Invalid "watchers.logs.level" in ${FILE}: use trace, debug, info, warn, error or fatal`)
    }
    return { name: 'logs', options: { level } }
  },
  /**
   * Outgoing HTTP requests made with `fetch` or `node:http`/`node:https`;
   * `slowMs` (1000) marks slow ones.
   */
  http(options: { slowMs?: number } = {}): WatcherDescriptor {
    return {
      name: 'http',
      options: { slowMs: positiveInteger(options.slowMs, 'watchers.http.slowMs', 1000) },
    }
  },
  /**
   * Atrium's own features, from their `atrium:<feature>:<event>` diagnostics
   * channels: payment webhook deliveries for now.
   */
  features(): WatcherDescriptor {
    return { name: 'features', options: {} }
  },
  /**
   * `@adonisjs/cache` (Bentocache) operations from its `bentocache.cache.operation`
   * tracing channel: get, set, getOrSet, delete... with key, store, hit and
   * duration. Values are recorded only with `values: true`, redacted and bounded.
   */
  cache(options: { values?: boolean; slowMs?: number } = {}): WatcherDescriptor {
    return {
      name: 'cache',
      package: '@adonisjs/cache',
      options: {
        values: options.values === true,
        slowMs: positiveInteger(options.slowMs, 'watchers.cache.slowMs', 100),
      },
    }
  },
  /**
   * Commands sent through `@adonisjs/redis` connections (all, or `connections`):
   * name, arguments with written values replaced by their length, connection
   * and duration.
   */
  redis(options: { slowMs?: number; connections?: string[] } = {}): WatcherDescriptor {
    if (options.connections !== undefined && !Array.isArray(options.connections)) {
      fail(`Invalid "watchers.redis.connections" in ${FILE}: use a list of connection names`)
    }
    return {
      name: 'redis',
      package: '@adonisjs/redis',
      options: {
        slowMs: positiveInteger(options.slowMs, 'watchers.redis.slowMs', 100),
        connections: options.connections,
      },
    }
  },
  /**
   * Mail sent through `@adonisjs/mail`, from its `mail:sending` and `mail:sent`
   * events: mailer, from, to, cc, bcc, subject. Bodies only with `bodies: true`.
   */
  mail(options: { bodies?: boolean } = {}): WatcherDescriptor {
    return { name: 'mail', package: '@adonisjs/mail', options: { bodies: options.bodies === true } }
  },
  /**
   * `@adonisjs/queue` jobs, from the `@boringnode/queue` tracing channels: one
   * entry per dispatch (in the dispatching request's batch) and one per
   * execution (in a batch of its own) with status, attempt, duration and
   * error; `slowMs` (1000) marks slow ones. Payloads only with `payloads: true`,
   * redacted and bounded.
   */
  jobs(options: { slowMs?: number; payloads?: boolean } = {}): WatcherDescriptor {
    return {
      name: 'jobs',
      package: '@adonisjs/queue',
      options: {
        slowMs: positiveInteger(options.slowMs, 'watchers.jobs.slowMs', 1000),
        payloads: options.payloads === true,
      },
    }
  },
  /**
   * Runs of scheduled tasks, from the `atrium.schedule.run` tracing channel
   * that `traceScheduledTask` (or any scheduler) publishes: one entry per run
   * (in a batch of its own, which what the task records joins) with name,
   * expression, start, duration, outcome and error; `slowMs` (60000) marks
   * slow ones.
   */
  schedules(options: { slowMs?: number } = {}): WatcherDescriptor {
    return {
      name: 'schedules',
      options: { slowMs: positiveInteger(options.slowMs, 'watchers.schedules.slowMs', 60_000) },
    }
  },
  /**
   * The app emitter's events (`emitter.emit('order:placed', ...)` and
   * class-based events, named by their class), read where the app's emitter
   * emits them. The framework's own events and
   * those other watchers record are skipped unless `include` names them;
   * `exclude` always wins. Payloads are redacted and their JSON capped at
   * `maxPayloadBytes` (8192); `payloads: false` records names only.
   */
  events(
    options: {
      include?: EventNamePattern[]
      exclude?: EventNamePattern[]
      payloads?: boolean
      maxPayloadBytes?: number
    } = {}
  ): WatcherDescriptor {
    const maxPayloadBytes = positiveInteger(
      options.maxPayloadBytes,
      'watchers.events.maxPayloadBytes',
      8192
    )
    if (maxPayloadBytes < 1 || maxPayloadBytes > MAX_EVENT_PAYLOAD_BYTES) {
      fail(
        `Invalid "watchers.events.maxPayloadBytes" in ${FILE}: use a whole number from 1 to ${MAX_EVENT_PAYLOAD_BYTES}`
      )
    }
    return {
      name: 'events',
      options: {
        include: namePatterns(options.include, 'watchers.events.include'),
        exclude: namePatterns(options.exclude, 'watchers.events.exclude'),
        payloads: options.payloads !== false,
        maxPayloadBytes,
      },
    }
  },
}
