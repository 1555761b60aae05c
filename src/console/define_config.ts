import { configProvider } from '@adonisjs/core'
import type { ConfigProvider } from '@adonisjs/core/types'
import { durationMs, entryType, fail, FILE, fraction, positiveInteger } from './config_checks.ts'
import type {
  ConsoleConfig,
  ConsoleStoreFactory,
  ResolvedConsoleConfig,
  ResolvedDashboardAuth,
} from './types.ts'
import { MAX_PULSE_MINUTES } from './pulse.ts'
import { resolveMcp } from './mcp/config.ts'
import { resolveProfiling } from './profiling/config.ts'
import { resolvePrune } from './retention/config.ts'
import { resolveTracing } from './trace_context.ts'
import { resolveAlerts } from './alerts/config.ts'
import { pruneCustomTypes, resolveExtensions } from './extensions/define_extension.ts'
import { resolveAiDiagnosis } from './ai/config.ts'
import { resolveManagers } from './queues/config.ts'

export { durationMs } from './config_checks.ts'
export { watchers } from './watchers/descriptors.ts'

/** Shortest accepted `dashboardAuth.secret`, in bytes */
export const MIN_SECRET_BYTES = 32

/** Headers never recorded in clear */
export const DEFAULT_REDACTED_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-csrf-token',
  'x-xsrf-token',
]

/** Body and query keys never recorded in clear, at any depth */
export const DEFAULT_REDACTED_KEYS = [
  'password',
  'password_confirmation',
  'passwordConfirmation',
  'current_password',
  'token',
  'access_token',
  'refresh_token',
  'secret',
  'api_key',
  'apiKey',
  'card_number',
  'cvv',
]

/** Body content types whose bodies are never recorded */
export const DEFAULT_SKIPPED_BODY_TYPES = [
  'multipart/form-data',
  'application/octet-stream',
  'image/',
  'audio/',
  'video/',
  'application/pdf',
  'application/zip',
]

function resolveOverload(value: ConsoleConfig['overloadProtection']) {
  if (value === false) return false
  if (value !== undefined && value !== true && (typeof value !== 'object' || value === null)) {
    fail(
      `Invalid "overloadProtection" in ${FILE}: use true, false or { maxEventLoopLagMs, startupGraceMs }`
    )
  }
  const options = typeof value === 'object' ? value : {}
  const maxEventLoopLagMs = positiveInteger(
    options.maxEventLoopLagMs,
    'overloadProtection.maxEventLoopLagMs',
    200
  )
  if (maxEventLoopLagMs < 1) {
    fail(`Invalid "overloadProtection.maxEventLoopLagMs" in ${FILE}: use 1 ms or more`)
  }
  return {
    maxEventLoopLagMs,
    startupGraceMs: positiveInteger(
      options.startupGraceMs,
      'overloadProtection.startupGraceMs',
      5000
    ),
  }
}

function resolveDashboardAuth(
  options: ConsoleConfig['dashboardAuth']
): ResolvedDashboardAuth | undefined {
  if (options === undefined || options === null) return undefined
  const secret = options.secret
  if (typeof secret !== 'string' || secret.length === 0) {
    fail(
      `Missing "dashboardAuth.secret" in ${FILE}. Set CONSOLE_SESSION_SECRET to a random value of at least ${MIN_SECRET_BYTES} bytes (node -e "console.log(crypto.randomBytes(32).toString('base64url'))") or remove dashboardAuth`
    )
  }
  if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    fail(
      `"dashboardAuth.secret" in ${FILE} is ${Buffer.byteLength(secret)} bytes; use at least ${MIN_SECRET_BYTES} random bytes`
    )
  }
  const modes: ResolvedDashboardAuth['modes'] = []
  if (typeof options.session === 'function') modes.push('session')
  if (typeof options.login === 'function') modes.push('login')
  if (modes.length === 0) {
    fail(
      `"dashboardAuth" in ${FILE} needs a "session" hook (reads the host's own sign-in) or a "login" hook (checks a username and password)`
    )
  }
  if (options.revalidate !== undefined && typeof options.revalidate !== 'function') {
    fail(`Invalid "dashboardAuth.revalidate" in ${FILE}: use a function returning a boolean`)
  }
  return { ...options, ttlMs: durationMs(options.ttl ?? '8h', 'dashboardAuth.ttl'), modes }
}

function resolveClientErrors(
  options: ConsoleConfig['clientErrors'] = {}
): ResolvedConsoleConfig['clientErrors'] {
  return {
    enabled: options.enabled === true,
    maxBodyBytes: Math.max(
      256,
      positiveInteger(options.maxBodyBytes, 'clientErrors.maxBodyBytes', 16 * 1024)
    ),
    perMinute: Math.max(1, positiveInteger(options.perMinute, 'clientErrors.perMinute', 30)),
    burst: Math.max(1, positiveInteger(options.burst, 'clientErrors.burst', 10)),
  }
}

function resolvePulse(options: ConsoleConfig['pulse'] = {}): ResolvedConsoleConfig['pulse'] {
  if (options === null || typeof options !== 'object') {
    fail(`Invalid "pulse" in ${FILE}: use { slowRouteMs, windowMinutes }`)
  }
  const slowRouteMs = options.slowRouteMs ?? 1000
  if (!Number.isSafeInteger(slowRouteMs) || slowRouteMs < 1) {
    fail(`Invalid "pulse.slowRouteMs" in ${FILE}: use a whole number of milliseconds, 1 or more`)
  }
  const windowMinutes = options.windowMinutes ?? 60
  if (
    !Number.isSafeInteger(windowMinutes) ||
    windowMinutes < 1 ||
    windowMinutes > MAX_PULSE_MINUTES
  ) {
    fail(
      `Invalid "pulse.windowMinutes" in ${FILE}: use a whole number of minutes from 1 to ${MAX_PULSE_MINUTES}`
    )
  }
  return { slowRouteMs, windowMinutes }
}

function mountPath(path: string | undefined): string {
  const value = path ?? '/console'
  if (!/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/.test(value) || value.includes('//')) {
    fail(`Invalid "path" in ${FILE}: use a path such as '/console' (no trailing slash)`)
  }
  return value
}

/**
 * Stores for `storage`. The embedded store is the console's own SQLite file
 * (config/console.ts's default); the Lucid store writes to the app's default
 * connection unless one is named; the memory store is for tests.
 */
export const stores = {
  embedded(options: { path?: string; writerThread?: boolean } = {}): ConsoleStoreFactory {
    if (options.path !== undefined && (typeof options.path !== 'string' || !options.path)) {
      fail(
        `Invalid "storage" in ${FILE}: stores.embedded({ path }) takes a file path, or no path for tmp/console.sqlite3`
      )
    }
    return {
      driver: 'embedded',
      resolver: async (app) => {
        const { EMBEDDED_CONNECTION, openEmbedded } = await import('./stores/embedded.ts')
        const { LucidConsoleStore } = await import('./stores/lucid.ts')
        const db = await app.container.make('lucid.db')
        const embedded = await openEmbedded(app, db, options.path)
        return new LucidConsoleStore(db, EMBEDDED_CONNECTION, {
          writerThread: options.writerThread,
          embedded,
        })
      },
    }
  },
  database(options: { connection?: string; writerThread?: boolean } = {}): ConsoleStoreFactory {
    return {
      driver: 'database',
      resolver: async (app) => {
        const { LucidConsoleStore } = await import('./stores/lucid.ts')
        const db = await app.container.make('lucid.db')
        return new LucidConsoleStore(db, options.connection, {
          writerThread: options.writerThread,
        })
      },
    }
  },
  memory(): ConsoleStoreFactory {
    return {
      driver: 'memory',
      resolver: async () => {
        const { MemoryConsoleStore } = await import('./stores/memory.ts')
        return new MemoryConsoleStore()
      },
    }
  },
}

/**
 * Validates the options and fills in their defaults; throws a config error
 * naming the key and the fix.
 */
export function resolveConsoleConfig(config: ConsoleConfig = {}): ResolvedConsoleConfig {
  if (config === null || typeof config !== 'object') fail(`${FILE} must export defineConfig({...})`)
  const sampling: ResolvedConsoleConfig['sampling'] = {}
  for (const [name, value] of Object.entries(config.sampling ?? {})) {
    sampling[entryType(name, 'sampling')] = fraction(value, `sampling.${name}`)
  }
  for (const key of ['authorizer', 'authorizeAction', 'resolveUser'] as const) {
    if (config[key] !== undefined && typeof config[key] !== 'function') {
      fail(`Invalid "${key}" in ${FILE}: use a function`)
    }
  }
  const redact = config.redact ?? {}
  const capture = config.requestCapture ?? {}
  const buffer = config.buffer ?? {}
  const maxEntries = Math.max(1, positiveInteger(buffer.maxEntries, 'buffer.maxEntries', 10_000))
  // managers listed among the watchers are split out first; extensions add their watchers after
  const managers = resolveManagers(config)
  const extensions = resolveExtensions(config.extensions, managers.watchers)
  return {
    enabled: config.enabled ?? true,
    path: mountPath(config.path),
    storage: config.storage ?? stores.database(),
    ...managers,
    watchers: extensions.watchers,
    sampling,
    redact: {
      headers: [...DEFAULT_REDACTED_HEADERS, ...(redact.headers ?? [])].map((h) => h.toLowerCase()),
      keys: [...DEFAULT_REDACTED_KEYS, ...(redact.keys ?? [])].map((k) => k.toLowerCase()),
      maxDepth: positiveInteger(redact.maxDepth, 'redact.maxDepth', 8),
      maxStringLength: positiveInteger(redact.maxStringLength, 'redact.maxStringLength', 4096),
      maxArrayLength: positiveInteger(redact.maxArrayLength, 'redact.maxArrayLength', 100),
      maxKeys: positiveInteger(redact.maxKeys, 'redact.maxKeys', 100),
    },
    requestCapture: {
      maxBodyBytes: positiveInteger(
        capture.maxBodyBytes,
        'requestCapture.maxBodyBytes',
        128 * 1024
      ),
      skipBodyContentTypes: capture.skipBodyContentTypes ?? DEFAULT_SKIPPED_BODY_TYPES,
      skipBody: capture.skipBody,
    },
    registerRequestMiddleware: config.registerRequestMiddleware ?? true,
    extensions: extensions.extensions,
    customEntryTypes: extensions.entryTypes,
    resolveUser: config.resolveUser ?? defaultResolveUser,
    exceptions: {
      captureHttp4xx: config.exceptions?.captureHttp4xx ?? false,
      processCrashes: resolveProcessCrashes(config.exceptions?.processCrashes),
    },
    slowRequestMs: positiveInteger(config.slowRequestMs, 'slowRequestMs', 1000),
    overloadProtection: resolveOverload(config.overloadProtection),
    buffer: {
      maxEntries,
      flushAt: Math.max(
        1,
        positiveInteger(buffer.flushAt, 'buffer.flushAt', Math.ceil(maxEntries / 2))
      ),
      maxEntriesPerBatch: Math.max(
        1,
        positiveInteger(buffer.maxEntriesPerBatch, 'buffer.maxEntriesPerBatch', 1000)
      ),
      flushIntervalMs: Math.max(
        10,
        positiveInteger(buffer.flushIntervalMs, 'buffer.flushIntervalMs', 1000)
      ),
    },
    prune: pruneCustomTypes(
      resolvePrune(config.prune, config.archive),
      config,
      extensions.entryTypes
    ),
    clientErrors: resolveClientErrors(config.clientErrors),
    pulse: resolvePulse(config.pulse),
    authorizer: config.authorizer,
    authorizeAction: config.authorizeAction,
    explainQuery: config.explainQuery,
    dashboardAuth: resolveDashboardAuth(config.dashboardAuth),
    api: { middleware: config.middleware ?? [], signInUrl: config.signInUrl ?? '/login' },
    ui: {
      enabled: config.ui?.enabled ?? true,
      middleware: config.ui?.middleware ?? [],
      signInUrl: config.ui?.signInUrl ?? '/login',
      liveTail: config.ui?.liveTail ?? true,
    },
    mcp: resolveMcp(config.mcp, mountPath(config.path)),
    profiling: resolveProfiling(config.profiling),
    ...resolveTracing(config.traceContext, config.traceLink),
    alerts: resolveAlerts(config.alerts),
    ai: resolveAiDiagnosis(config.ai),
  }
}

/** Longest `exceptions.processCrashes.flushTimeoutMs`: a crashing process should not linger */
export const MAX_CRASH_FLUSH_MS = 10_000

function resolveProcessCrashes(
  value: NonNullable<ConsoleConfig['exceptions']>['processCrashes']
): ResolvedConsoleConfig['exceptions']['processCrashes'] {
  if (value === undefined || value === false) return false
  if (value !== true && (typeof value !== 'object' || value === null)) {
    fail(`Invalid "exceptions.processCrashes" in ${FILE}: use true, false or { flushTimeoutMs }`)
  }
  const options = value === true ? {} : value
  const flushTimeoutMs = positiveInteger(
    options.flushTimeoutMs,
    'exceptions.processCrashes.flushTimeoutMs',
    2000
  )
  if (flushTimeoutMs < 1 || flushTimeoutMs > MAX_CRASH_FLUSH_MS) {
    fail(
      `Invalid "exceptions.processCrashes.flushTimeoutMs" in ${FILE}: use 1 to ${MAX_CRASH_FLUSH_MS} milliseconds`
    )
  }
  return { flushTimeoutMs }
}

/** The user on a request entry: `ctx.auth.user` when @adonisjs/auth authenticated one */
function defaultResolveUser(ctx: any) {
  const user = ctx.auth?.user
  if (!user || (user.id === undefined && user.email === undefined)) return null
  return { id: String(user.id ?? user.email) }
}

/**
 * `config/console.ts`: validates now, and resolves the store and hooks once
 * the app boots.
 */
export function defineConfig(config: ConsoleConfig = {}): ConfigProvider<ResolvedConsoleConfig> {
  const resolved = resolveConsoleConfig(config)
  return configProvider.create(async () => resolved)
}
