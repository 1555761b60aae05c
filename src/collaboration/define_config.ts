import { configProvider } from '@adonisjs/core'
import type { ApplicationService, ConfigProvider } from '@adonisjs/core/types'
import { CollabConfigError } from './errors.ts'
import { resolveLimits } from './limits.ts'
import { InMemoryCollaborationStorage } from './storage/memory.ts'
import type {
  CollabDocumentDeclaration,
  CollabEngineInput,
  CollabEngineName,
  CollaborationConfig,
  CollaborationConfigInput,
  CollaborationStorage,
  DocumentParams,
} from './types.ts'

/**
 * Every engine name, with the specification's neutral aliases.
 */
const ENGINE_ALIASES: Record<CollabEngineInput, CollabEngineName> = {
  yjs: 'yjs',
  automerge: 'automerge',
  partykit: 'partykit',
  partyserver: 'partyserver',
  crdt_a: 'yjs',
  crdt_b: 'automerge',
  hosted_a: 'partykit',
  hosted_b: 'partyserver',
}

/**
 * The engines this release serves. Naming another one is a boot error, so an
 * app never issues tokens for documents nothing serves.
 */
export const SERVED_ENGINES: readonly CollabEngineName[] = [
  'yjs',
  'automerge',
  'partykit',
  'partyserver',
]

const where = 'in config/collaboration.ts'

/**
 * The engine a name or alias stands for, or null for an unknown name.
 */
export function engineOf(value: unknown): CollabEngineName | null {
  return typeof value === 'string' && Object.hasOwn(ENGINE_ALIASES, value)
    ? ENGINE_ALIASES[value as CollabEngineInput]
    : null
}

/**
 * The engine a name stands for when this release serves it; otherwise an
 * error naming the engines that are served.
 */
export function servedEngine(name: string, value: unknown): CollabEngineName {
  const engine = engineOf(value)
  if (!engine || !SERVED_ENGINES.includes(engine)) {
    const what = engine
      ? `the "${engine}" engine is not served by this release`
      : `${JSON.stringify(value)} is not an engine`
    throw new CollabConfigError(
      `Invalid "${name}" ${where}: ${what}. Use ${SERVED_ENGINES.map((served) => `"${served}"`).join(', ')}`
    )
  }
  return engine
}

/**
 * A hosted engine serves documents from a room worker: the app needs the
 * worker's host and the secret both sign and verify tokens with.
 */
function assertHostedConfig(
  key: string,
  engine: CollabEngineName,
  hosted: CollaborationConfigInput['hosted']
) {
  if (engine !== 'partykit' && engine !== 'partyserver') {
    return
  }
  const missing = !hosted?.roomHost
    ? 'hosted.roomHost'
    : !hosted.jwtSecret
      ? 'hosted.jwtSecret'
      : null
  if (missing) {
    throw new CollabConfigError(
      `Missing "${missing}" ${where}: "${key}" is "${engine}", whose room worker needs hosted: { roomHost: env.get('COLLAB_ROOM_HOST'), jwtSecret: env.get('COLLAB_JWT_SECRET'), workerSecret: env.get('COLLAB_WORKER_SECRET') }. Run: node ace collaboration:init --engine=${engine}`
    )
  }
}

/**
 * Documents shared across instances need Redis to fan out through and a
 * storage every instance shares, with an update log each appends to.
 */
function multiInstanceOf(config: CollaborationConfigInput<any>): boolean {
  if (config.multiInstance === undefined || config.multiInstance === false) {
    return false
  }
  if (config.multiInstance !== true) {
    throw new CollabConfigError(`Invalid "multiInstance" ${where}: expected true or false`)
  }
  if (!config.redis && !config.redisUrl) {
    throw new CollabConfigError(
      `"multiInstance" ${where} fans documents out through Redis: set redis: 'main' (a connection of @adonisjs/redis) or redisUrl`
    )
  }
  const storage = config.storage as Partial<CollaborationStorage> | undefined
  if (
    !storage ||
    storage instanceof InMemoryCollaborationStorage ||
    (!isConfigProvider(storage) && (!storage.appendUpdate || !storage.compactDocument))
  ) {
    throw new CollabConfigError(
      `"multiInstance" ${where} needs a storage every instance shares, with an update log: set storage: relationalStorage()`
    )
  }
  return true
}

function positiveNumber(name: string, value: unknown, fallback: number): number {
  if (value === undefined) {
    return fallback
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new CollabConfigError(
      `Invalid "${name}" ${where}: expected a positive number of milliseconds, received ${JSON.stringify(value)}`
    )
  }
  return value
}

function normalizePath(name: string, value: unknown, fallback: string): string {
  if (value === undefined) {
    return fallback
  }
  if (typeof value !== 'string' || !value.startsWith('/')) {
    throw new CollabConfigError(
      `Invalid "${name}" ${where}: expected a path starting with "/", received ${JSON.stringify(value)}`
    )
  }
  return value.length > 1 ? value.replace(/\/+$/, '') : value
}

function isConfigProvider(value: unknown): value is ConfigProvider<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as ConfigProvider<unknown>).type === 'provider' &&
    typeof (value as ConfigProvider<unknown>).resolver === 'function'
  )
}

/**
 * Validates the options and fills in every default, with the storage given
 * as an instance. `defineConfig` runs it once at config load (to fail early)
 * and again in its resolver with the storage built from the app.
 */
export function normalizeConfig<
  Documents extends Record<string, CollabDocumentDeclaration<any>> = {},
>(config: CollaborationConfigInput<Documents> = {}): CollaborationConfig<Documents> {
  const engine = servedEngine('engine', config.engine ?? 'yjs')
  const documents = (config.documents ?? {}) as Documents
  assertHostedConfig('engine', engine, config.hosted)
  for (const [pattern, declaration] of Object.entries(documents)) {
    assertPattern(pattern, `documents["${pattern}"]`)
    if (declaration?.engine !== undefined) {
      const key = `documents["${pattern}"].engine`
      assertHostedConfig(key, servedEngine(key, declaration.engine), config.hosted)
    }
  }
  if (isConfigProvider(config.storage)) {
    throw new CollabConfigError(
      `"storage" ${where} is resolved with the app: export defineConfig(...) and let the provider resolve it`
    )
  }
  if (config.redis !== undefined && (typeof config.redis !== 'string' || !config.redis)) {
    throw new CollabConfigError(
      `Invalid "redis" ${where}: expected the name of a connection in config/redis.ts, such as "main"`
    )
  }

  const debounce = positiveNumber('debounce', config.debounce, 2000)
  const routes = config.routes ?? {}
  return {
    engine,
    engineFor: config.engineFor,
    documents,
    authorize: config.authorize,
    storage: config.storage ?? new InMemoryCollaborationStorage(),
    storageIsDefault: config.storage === undefined,
    path: normalizePath('path', config.path, '/collaboration'),
    debounce,
    maxWait: positiveNumber('maxWait', config.maxWait, debounce * 10),
    appendInterval: Math.min(positiveNumber('appendInterval', config.appendInterval, 100), 250),
    redis: config.redis,
    redisUrl: config.redisUrl || undefined,
    redisPrefix: config.redisPrefix ?? 'atrium:collab:',
    multiInstance: multiInstanceOf(config),
    tokenSecret: config.tokenSecret || undefined,
    hosted: config.hosted
      ? {
          roomHost: config.hosted.roomHost,
          party: config.hosted.party ?? 'main',
          jwtSecret: config.hosted.jwtSecret,
          workerSecret: config.hosted.workerSecret || undefined,
          fetchTimeoutMs: positiveNumber(
            'hosted.fetchTimeoutMs',
            config.hosted.fetchTimeoutMs,
            10_000
          ),
        }
      : undefined,
    limits: resolveLimits(config.limits),
    routes: {
      enabled: routes.enabled ?? true,
      prefix: normalizePath('routes.prefix', routes.prefix, '/collaboration'),
      middleware: routes.middleware ?? [],
      resolveUser: routes.resolveUser,
    },
  }
}

/**
 * Validates `config/collaboration.ts` now and returns what the provider
 * resolves once with the app: storages built from the container (Lucid's
 * `db`) and the `@adonisjs/redis` connection named by `redis`.
 */
export function defineConfig<Patterns extends string = never>(
  config: Omit<CollaborationConfigInput, 'documents'> & {
    // one key per pattern, so each rule's params are typed from its pattern
    documents?: { [Pattern in Patterns]: CollabDocumentDeclaration<DocumentParams<Pattern>> }
  } = {}
): ConfigProvider<CollaborationConfig<Record<Patterns, CollabDocumentDeclaration<any>>>> & {
  documents: Record<Patterns, CollabDocumentDeclaration<any>>
} {
  type Documents = Record<Patterns, CollabDocumentDeclaration<any>>
  const storage = config.storage
  normalizeConfig({ ...config, storage: isConfigProvider(storage) ? undefined : storage })
  const provider = configProvider.create(async (app) => {
    const resolved = normalizeConfig<Documents>({
      ...config,
      storage: isConfigProvider(storage)
        ? ((await storage.resolver(app)) as CollaborationStorage)
        : storage,
    })
    if (resolved.redis) {
      resolved.redisClient = await redisConnection(app, resolved.redis)
    }
    return resolved
  })
  // the stub's type augmentation reads the declared patterns from here
  return Object.assign(provider, { documents: (config.documents ?? {}) as Documents })
}

/**
 * The ioredis client of a named `@adonisjs/redis` connection.
 */
async function redisConnection(app: ApplicationService, name: string) {
  if (!app.container.hasBinding('redis' as any)) {
    throw new CollabConfigError(
      `"redis: '${name}'" ${where} needs @adonisjs/redis: run "node ace add @adonisjs/redis", or set "redisUrl" instead`
    )
  }
  const manager: any = await app.container.make('redis' as any)
  const connection = manager.connection(name)
  return connection.ioConnection ?? connection
}

function assertPattern(pattern: string, name: string) {
  if (!pattern || pattern.startsWith('/') || pattern.endsWith('/') || pattern.includes('//')) {
    throw new CollabConfigError(
      `Invalid document pattern ${name} ${where}: segments are separated by "/" with no leading, trailing or empty segment`
    )
  }
}

/**
 * The `:segments` of a pattern, in order; empty for an exact name.
 */
export function documentPatternParams(pattern: string): string[] {
  return pattern
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1))
}

/**
 * Params a pattern extracts from a document name, or null when it does not
 * match (same segment count, literal segments equal, no empty capture).
 */
export function matchDocumentPattern<Pattern extends string>(
  pattern: Pattern,
  docName: string
): DocumentParams<Pattern> | null {
  const expected = pattern.split('/')
  const actual = docName.split('/')
  if (expected.length !== actual.length) {
    return null
  }
  const params: Record<string, string> = {}
  for (const [index, segment] of expected.entries()) {
    if (segment.startsWith(':')) {
      if (!actual[index]) {
        return null
      }
      params[segment.slice(1)] = actual[index]
    } else if (segment !== actual[index]) {
      return null
    }
  }
  return params as DocumentParams<Pattern>
}

/**
 * `{ '<prefix>/:id': declaration }`, to spread into `documents`.
 */
export function defineCollection<const Prefix extends string>(
  prefix: Prefix,
  declaration: CollabDocumentDeclaration<{ id: string }> = {}
): { [K in `${Prefix}/:id`]: CollabDocumentDeclaration<{ id: string }> } {
  if (
    typeof prefix !== 'string' ||
    !prefix ||
    prefix.startsWith('/') ||
    prefix.endsWith('/') ||
    prefix.split('/').some((segment) => !segment || segment.startsWith(':'))
  ) {
    throw new CollabConfigError(
      `Invalid collection prefix ${JSON.stringify(prefix)}: use literal segments such as "notes" or "team/notes", without ":params" or leading/trailing "/"`
    )
  }
  return { [`${prefix}/:id`]: declaration } as any
}

/**
 * Identity helper that types a declaration kept away from its key.
 */
export function defineDocument<P extends Record<string, string> = Record<string, string>>(
  declaration: CollabDocumentDeclaration<P>
): CollabDocumentDeclaration<P> {
  return declaration
}

/**
 * The first declaration whose pattern matches, with its params.
 */
export function findDocumentDeclaration(
  documents: Record<string, CollabDocumentDeclaration<any>>,
  docName: string
): {
  pattern: string
  declaration: CollabDocumentDeclaration<any>
  params: Record<string, string>
} | null {
  for (const [pattern, declaration] of Object.entries(documents)) {
    const params = matchDocumentPattern(pattern, docName)
    if (params) {
      return { pattern, declaration, params }
    }
  }
  return null
}
