import type { HttpContext, Route } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import type { ConsoleStore } from './stores/contract.ts'
import type { ProfilingOptions, ResolvedProfiling } from './profiling/config.ts'
import type { QueryExplainer } from './http/explain.ts'
import type { TraceContextOption } from './trace_context.ts'
import type { AlertsOptions, ResolvedAlerts } from './alerts/config.ts'
import type { ConsoleExtension, CustomWatcher } from './extensions/types.ts'
import type { AiDiagnosisOptions, ResolvedAiDiagnosis } from './ai/config.ts'
import type { ConsoleQueueManager, ConsoleScheduleManager } from './queues/contract.ts'

export type * from './queues/contract.ts'

/** A duration: `'8h'`, `'30m'`, `'24h'`, or milliseconds */
export type Duration = string | number

/** Kinds of entries this version records */
export const ENTRY_TYPES = [
  'request',
  'query',
  'exception',
  'log',
  'http',
  'feature',
  'cache',
  'redis',
  'mail',
  'job',
  'schedule',
  'event',
  'client_error',
  'cpu_profile',
] as const
export type EntryType = (typeof ENTRY_TYPES)[number]

/** What a `session`, `login` or `resolveUser` hook returns for a user */
export interface ConsoleSessionUser {
  id: string
  name?: string
  roles?: string[]
}

/** The verified payload of the `console_session` cookie, on `ctx.request.consoleSession` */
export interface ConsoleSession {
  sub: string
  name?: string
  roles: string[]
  /** Issue instant, Unix seconds */
  iat: number
  /** Expiry instant, Unix seconds */
  exp: number
}

/** `dashboardAuth`: a signed-cookie session in front of the API */
export interface DashboardAuthOptions {
  /** HMAC-SHA256 signing key, at least 32 bytes */
  secret: string
  /** Cookie lifetime, `'8h'` by default */
  ttl?: Duration
  /** Mode A: reads the host's own credentials from the request; null denies */
  session?: (ctx: HttpContext) => ConsoleSessionUser | null | Promise<ConsoleSessionUser | null>
  /** Mode B: checks a username and password (passed verbatim, even empty); null denies */
  login?: (
    username: string,
    password: string
  ) => ConsoleSessionUser | null | Promise<ConsoleSessionUser | null>
  /** Re-check on renewal, at most once per ttl/2 per session; false or a throw signs out */
  revalidate?: (session: ConsoleSessionUser & { roles: string[] }) => boolean | Promise<boolean>
}

/** Adonis middleware as `route.use()` accepts it: lazy imports, named middleware or functions */
export type SurfaceMiddleware = Parameters<Route['use']>[0]

/** Options of one served surface (the API, or the page under `ui`) */
export interface SurfaceOptions {
  /** The host's middleware in front of this surface only */
  middleware?: SurfaceMiddleware[]
  /** Where a refused browser navigation is redirected (302); `'/login'` by default */
  signInUrl?: string
}

/** Gate hook: true lets the request through */
export type ConsoleAuthorizer = (ctx: HttpContext) => boolean | Promise<boolean>

/** Gate hook for mutations: true lets the action run */
export type ConsoleActionAuthorizer = (
  ctx: HttpContext,
  action: { name: string }
) => boolean | Promise<boolean>

/** Content bounds and redacted keys applied to everything recorded */
export interface RedactOptions {
  /** Header names replaced by `[redacted]` (case-insensitive), added to the defaults */
  headers?: string[]
  /** Body and query keys replaced at any depth (case-insensitive), added to the defaults */
  keys?: string[]
  maxDepth?: number
  maxStringLength?: number
  maxArrayLength?: number
  maxKeys?: number
}

/** Gates a request body before it is recorded */
export interface RequestCaptureOptions {
  maxBodyBytes?: number
  skipBodyContentTypes?: string[]
  skipBody?: (ctx: HttpContext) => boolean
}

/** A watcher added through `watchers` */
export interface WatcherDescriptor {
  name: string
  options: Record<string, unknown>
  /** The optional package the watcher reads from (`@adonisjs/redis`), checked at boot */
  package?: string
  /** A custom watcher's own start (an extension's); the console starts it instead of a built-in */
  install?: CustomWatcher['install']
  /** The extension that brought this watcher */
  extension?: string
}

/** `clientErrors`: the public endpoint browsers report their errors to */
export interface ClientErrorsOptions {
  /** Off by default: `POST {path}/api/client-errors` is not mounted */
  enabled?: boolean
  /** Largest accepted body, 16 KiB by default; a larger one is a 413 */
  maxBodyBytes?: number
  /** Reports per minute per IP (token bucket refill), 30 by default */
  perMinute?: number
  /** Reports one IP may send at once before the rate applies, 10 by default */
  burst?: number
}

/** Retention */
export interface PruneOptions {
  /** Entries older than this are deleted */
  after?: Duration
  /** Per-type age cutoffs, overriding `after` */
  perType?: Partial<Record<EntryType, Duration>>
  /** Newest rows kept per type (one number for all, or per type) */
  maxRows?: number | Partial<Record<EntryType, number>>
  /** Age of the per-minute rollups to delete; the `request` cutoff by default */
  rollupsAfter?: Duration
  batchSize?: number
  maxBatchesPerCycle?: number
  batchPauseMs?: number
  /**
   * ms between the prunes each app instance runs on its own: 5 minutes by
   * default when a rule above is set; `false` leaves pruning to
   * `console:prune` and `POST {path}/api/prune`
   */
  intervalMs?: number | false
  /**
   * Whom a fleet's prunes take turns through: a lease row in `console_leases`
   * (the console's storage) by default, a `PruneLock` of your own (for
   * example on `@adonisjs/lock`), or `false` for none
   */
  lock?: PruneLock | false
  /** ms a prune may hold the lock, `max(intervalMs * 3, 60 s)` by default */
  lockTtlMs?: number
}

/**
 * The lock a prune takes so a fleet prunes once per cycle: resolves to the
 * lock's release, or to null when another process holds it.
 */
export interface PruneLock {
  acquire(name: string, ttlMs: number): Promise<(() => Promise<void>) | null>
}

/** Receives a type's entries, oldest first, before the prune deletes them */
export type ArchiveSink = (entries: ConsoleEntry[], type: EntryType) => Promise<void> | void

/** `archive`: where entries go before a prune deletes them */
export interface ArchiveOptions {
  sink: ArchiveSink
  /** The types archived; every type by default */
  types?: EntryType[]
}

/** `pulse`: the health snapshot at `GET {path}/api/health` */
export interface PulseOptions {
  /** A route whose p99 reaches this many ms is listed as slow, 1000 by default */
  slowRouteMs?: number
  /** Minutes the snapshot covers when `?minutes=` is absent, 60 by default (1 to 1440) */
  windowMinutes?: number
}

/** `pulse` with its defaults applied */
export type ResolvedPulse = Required<PulseOptions>

/** `mcp` as config/console.ts writes it */
export interface McpOptions {
  /** Bearer token every MCP request must carry, at least 32 bytes */
  token: string
  /** Sub-path under the console's mount path, `'/mcp'` by default */
  path?: string
}

/** `mcp` with its defaults applied; `token` is null in the tokenless development mode */
export interface ResolvedMcp {
  token: string | null
  /** Full path of the endpoint: the mount path and the MCP sub-path */
  path: string
}

/** Creates the store once the app is known */
export interface ConsoleStoreFactory {
  driver: string
  resolver: (app: ApplicationService) => Promise<ConsoleStore>
}

/** What `config/console.ts` accepts */
export interface ConsoleConfig {
  enabled?: boolean
  /** Mount path of the page and the API, `/console` by default */
  path?: string
  storage?: ConsoleStoreFactory
  /** Watchers; an object implementing a queue or schedule manager contract is registered as one too */
  watchers?: Array<WatcherDescriptor | ConsoleQueueManager | ConsoleScheduleManager>
  /** Live queues the dashboard lists and (behind `authorizeAction`) acts on */
  queueManagers?: ConsoleQueueManager[]
  /** Schedulers whose tasks the dashboard lists */
  scheduleManagers?: ConsoleScheduleManager[]
  /** Keep-fractions (0 to 1) per entry type; `request` samples whole batches */
  sampling?: Partial<Record<EntryType, number>>
  redact?: RedactOptions
  requestCapture?: RequestCaptureOptions
  /**
   * Registers the request watcher as server middleware (`true`); `false`
   * leaves it to the app, which skips `consoleMountPaths()`
   */
  registerRequestMiddleware?: boolean
  /** Watchers, entry types, data providers and pages of the app's own (`defineConsoleExtension`) */
  extensions?: ConsoleExtension[]
  resolveUser?: (ctx: HttpContext) => ConsoleSessionUser | null | undefined
  exceptions?: {
    captureHttp4xx?: boolean
    /**
     * Unhandled rejections and uncaught exceptions as exception entries,
     * flushed before the process goes down: `true` (2000 ms to flush) or
     * `{ flushTimeoutMs }`; off by default
     */
    processCrashes?: boolean | { flushTimeoutMs?: number }
  }
  /** A request at least this long is slow and always kept, 1000 ms by default */
  slowRequestMs?: number
  /**
   * Pause recording while the event loop lags: `true` (200 ms p99, 5000 ms
   * startup grace), `false`, or the two numbers
   */
  overloadProtection?: boolean | { maxEventLoopLagMs?: number; startupGraceMs?: number }
  /** In-memory buffer between the request and the store */
  buffer?: {
    maxEntries?: number
    maxEntriesPerBatch?: number
    flushIntervalMs?: number
    /** Buffered entries that trigger a flush before the timer, half of `maxEntries` by default */
    flushAt?: number
  }
  prune?: PruneOptions
  /** Hands each type's entries to a sink before a prune deletes them (already redacted) */
  archive?: ArchiveOptions
  clientErrors?: ClientErrorsOptions
  pulse?: PulseOptions
  authorizer?: ConsoleAuthorizer
  authorizeAction?: ConsoleActionAuthorizer
  /** Plans a recorded query for `POST {path}/api/entries/:id/explain`; `explainWithLucid()` is ready */
  explainQuery?: QueryExplainer
  dashboardAuth?: DashboardAuthOptions
  middleware?: SurfaceMiddleware[]
  signInUrl?: string
  /** The page's own options */
  ui?: SurfaceOptions & {
    enabled?: boolean
    /**
     * New entries pushed to open lists through `@adonisjs/transmit`, when the
     * app registers its provider; `true` by default
     */
    liveTail?: boolean
  }
  /**
   * Model Context Protocol endpoint for AI assistants: `true` (development
   * only, no token), `{ token, path? }` (bearer-gated everywhere), or false
   */
  mcp?: boolean | McpOptions
  /** CPU profiles through `node:inspector`; off by default */
  profiling?: ProfilingOptions
  /**
   * Stamps a request batch's entries with its trace: `true` reads the W3C
   * `traceparent` header, a function reads your own source; off by default
   */
  traceContext?: TraceContextOption
  /** Where a trace id links to: a URL template such as `https://tempo.example.com/trace/{traceId}` */
  traceLink?: string
  /** Rules evaluated off the request path, notifying channels (webhook, log, your own) */
  alerts?: AlertsOptions | false
  /**
   * AI diagnosis of exception entries (`POST {path}/api/entries/:id/diagnose`)
   * by an AI SDK language model; off when absent. Needs the `ai` package.
   */
  ai?: AiDiagnosisOptions | false
}

/** `dashboardAuth` with its defaults applied */
export interface ResolvedDashboardAuth extends DashboardAuthOptions {
  ttlMs: number
  modes: Array<'session' | 'login'>
}

/** `prune` with its defaults applied; ages in ms */
export interface ResolvedPrune {
  after?: number
  perType: Partial<Record<EntryType, number>>
  maxRows: Partial<Record<EntryType, number>>
  rollupsAfter?: number
  /** ms between scheduled prunes; undefined when nothing is scheduled */
  intervalMs?: number
  /** `'storage'`: the lease row in `console_leases` */
  lock: PruneLock | 'storage' | false
  lockTtlMs: number
  archive?: { sink: ArchiveSink; types: EntryType[] }
  batchSize: number
  maxBatchesPerCycle: number
  batchPauseMs: number
  /** The extensions' entry types, pruned after the built-in ones */
  customTypes?: EntryType[]
}

/** `config/console.ts` after `defineConfig` and the provider resolved it */
export interface ResolvedConsoleConfig {
  enabled: boolean
  path: string
  storage: ConsoleStoreFactory
  watchers: WatcherDescriptor[]
  /** Each object once, whether listed here, in `watchers` or both */
  queueManagers: ConsoleQueueManager[]
  scheduleManagers: ConsoleScheduleManager[]
  sampling: Partial<Record<EntryType, number>>
  redact: Required<RedactOptions>
  requestCapture: Required<Omit<RequestCaptureOptions, 'skipBody'>> & {
    skipBody?: RequestCaptureOptions['skipBody']
  }
  registerRequestMiddleware: boolean
  extensions: ConsoleExtension[]
  /** The entry types the extensions declare, beside the built-in ones */
  customEntryTypes: string[]
  resolveUser: (ctx: HttpContext) => ConsoleSessionUser | null | undefined
  exceptions: { captureHttp4xx: boolean; processCrashes: false | { flushTimeoutMs: number } }
  slowRequestMs: number
  overloadProtection: false | { maxEventLoopLagMs: number; startupGraceMs: number }
  buffer: {
    maxEntries: number
    maxEntriesPerBatch: number
    flushIntervalMs: number
    flushAt: number
  }
  prune: ResolvedPrune
  clientErrors: Required<ClientErrorsOptions>
  pulse: ResolvedPulse
  authorizer?: ConsoleAuthorizer
  authorizeAction?: ConsoleActionAuthorizer
  explainQuery?: QueryExplainer
  dashboardAuth?: ResolvedDashboardAuth
  api: Required<SurfaceOptions>
  ui: Required<SurfaceOptions> & { enabled: boolean; liveTail: boolean }
  mcp: ResolvedMcp | false
  profiling: ResolvedProfiling
  traceContext: TraceContextOption
  traceLink?: string
  alerts: ResolvedAlerts | false
  ai: ResolvedAiDiagnosis | false
}

/** One recorded entry as the store keeps it */
export interface ConsoleEntry {
  /** Time-ordered id: sorts as the entries were recorded */
  id: string
  batchId: string
  type: EntryType
  /** One line for lists: `GET /users`, the SQL, the exception message */
  summary: string
  status: number | null
  method: string | null
  durationMs: number | null
  slow: boolean
  tags: string[]
  /** Unix ms */
  createdAt: number
  content: Record<string, unknown>
}

/** What list endpoints return: an entry without its content */
export type ConsoleEntrySummary = Omit<ConsoleEntry, 'content'>

declare module '@adonisjs/core/http' {
  interface HttpRequest {
    /** The verified `console_session` cookie on console routes */
    consoleSession?: ConsoleSession
  }
  interface HttpContext {
    /** The verified `console_session` cookie on console routes */
    consoleSession?: ConsoleSession
  }
}
