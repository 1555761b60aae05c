import { CollabConfigError } from './errors.ts'
import { resolveLimits } from './limits.ts'
import { InMemoryCollaborationStorage } from './storage/memory.ts'
import type {
  CollabDocumentDeclaration,
  CollabEngineName,
  CollaborationConfig,
  CollaborationConfigInput,
  DocumentParams,
} from './types.ts'

const ENGINES: CollabEngineName[] = ['crdt_a', 'crdt_b', 'hosted_a', 'hosted_b']
const where = 'in config/collaboration.ts'

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

function engineName(name: string, value: unknown): CollabEngineName {
  if (!ENGINES.includes(value as CollabEngineName)) {
    throw new CollabConfigError(
      `Invalid "${name}" ${where}: ${JSON.stringify(value)} is not an engine. Use one of ${ENGINES.join(', ')}`
    )
  }
  return value as CollabEngineName
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

/**
 * Validates `config/collaboration.ts` and fills in every default.
 */
export function defineConfig<
  const Documents extends Record<string, CollabDocumentDeclaration<any>> = {},
>(config: CollaborationConfigInput<Documents> = {}): CollaborationConfig<Documents> {
  const engine = engineName('engine', config.engine ?? 'crdt_a')
  const documents = (config.documents ?? {}) as Documents
  for (const [pattern, declaration] of Object.entries(documents)) {
    assertPattern(pattern, `documents["${pattern}"]`)
    if (declaration?.engine !== undefined) {
      engineName(`documents["${pattern}"].engine`, declaration.engine)
    }
  }

  const usesHosted =
    engine.startsWith('hosted') ||
    Object.values(documents).some((declaration) => declaration?.engine?.startsWith('hosted'))
  if (usesHosted && !config.hosted?.roomHost) {
    throw new CollabConfigError(
      `Missing "hosted.roomHost" ${where}. The hosted engines (hosted_a, hosted_b) need the room worker's host; set it or use engine "crdt_a"`
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
    redisUrl: config.redisUrl || undefined,
    redisPrefix: config.redisPrefix ?? 'atrium:collab:',
    tokenSecret: config.tokenSecret || undefined,
    hosted: config.hosted
      ? {
          roomHost: config.hosted.roomHost,
          party: config.hosted.party ?? 'main',
          jwtSecret: config.hosted.jwtSecret,
          workerSecret: config.hosted.workerSecret,
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
