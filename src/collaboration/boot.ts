import { configProvider } from '@adonisjs/core'
import type { ApplicationService } from '@adonisjs/core/types'
import { MissingPackageException } from '../shared/errors.ts'
import { engineOf } from './define_config.ts'
import { CollabConfigError } from './errors.ts'
import { configureTokenSecrets, resolveTokenSecret } from './tokens.ts'
import type { CollaborationManager } from './manager.ts'
import type { CollaborationConfig } from './types.ts'

/**
 * A module of each package to resolve: y-protocols has no root export.
 */
const PROBES: Record<string, string> = {
  'yjs': 'yjs',
  'y-protocols': 'y-protocols/sync',
  'lib0': 'lib0/encoding',
  'ws': 'ws',
  'ioredis': 'ioredis',
}

/**
 * Throws one line naming every missing package and the install command.
 * Resolution only: nothing is loaded.
 */
export function assertCollaborationPackages(
  packages: string[],
  resolve: (specifier: string) => string = (specifier) => import.meta.resolve(specifier)
) {
  const missing = packages.filter((name) => {
    try {
      resolve(PROBES[name] ?? name)
      return false
    } catch {
      return true
    }
  })
  if (missing.length) {
    throw new MissingPackageException(missing, 'Collaboration (config/collaboration.ts)')
  }
}

/**
 * The optional packages a config needs: the Yjs engine's, Automerge's when
 * the config names it, and ioredis for a
 * presence roster on `redisUrl` (an `@adonisjs/redis` connection brings its own).
 */
export function collaborationPackages(
  config: Pick<CollaborationConfig, 'redis' | 'redisUrl'> &
    Partial<Pick<CollaborationConfig, 'engine' | 'documents'>>
) {
  const packages = ['yjs', 'y-protocols', 'lib0', 'ws']
  const automerge =
    config.engine === 'automerge' ||
    Object.values(config.documents ?? {}).some(
      (declaration) => engineOf(declaration?.engine) === 'automerge'
    )
  if (automerge) {
    packages.push('@automerge/automerge-repo', '@automerge/automerge')
  }
  if (config.redisUrl && !config.redis) {
    packages.push('ioredis')
  }
  return packages
}

/**
 * The room worker authenticates to `/state` with a secret of its own: a
 * token secret would let anyone who can sign tokens act as the worker.
 */
export function assertWorkerSecret(config: CollaborationConfig, derivedTokenSecret?: string) {
  if (!config.hosted || !config.routes.enabled) {
    return
  }
  const secret = config.hosted.workerSecret
  if (!secret) {
    throw new CollabConfigError(
      'Missing "hosted.workerSecret" in config/collaboration.ts: the /state routes authenticate the room worker with it. Set COLLAB_WORKER_SECRET, or set "routes.enabled" to false'
    )
  }
  if ([config.hosted.jwtSecret, config.tokenSecret, derivedTokenSecret].includes(secret)) {
    throw new CollabConfigError(
      'Invalid "hosted.workerSecret" in config/collaboration.ts: it must differ from the token secrets. Set COLLAB_WORKER_SECRET to a secret of its own'
    )
  }
}

/**
 * What the `atrium.collaboration` binding resolves to: the config resolved
 * once with the app, checked (packages, worker secret), and the manager
 * built from it. The storage's tables are checked in the provider's ready(),
 * after the app's own boot hooks (where an app may run its migrations).
 */
export async function createCollaborationManager(
  app: ApplicationService,
  options: { appKey?: string } = {}
): Promise<CollaborationManager> {
  const raw = app.config.get<unknown>('collaboration', undefined)
  if (raw === undefined) {
    throw new CollabConfigError(
      'Missing config/collaboration.ts. Run "node ace configure adonis-atrium --features=collaboration", or create it with defineConfig from adonis-atrium/collaboration'
    )
  }
  const config = await configProvider.resolve<CollaborationConfig>(app, raw)
  if (!config) {
    throw new CollabConfigError(
      'config/collaboration.ts must export defineConfig({...}) from adonis-atrium/collaboration'
    )
  }
  assertCollaborationPackages(collaborationPackages(config))
  configureTokenSecrets({ tokenSecret: config.tokenSecret, appKey: options.appKey })
  assertWorkerSecret(config, options.appKey ? resolveTokenSecret() : undefined)
  const { CollaborationManager } = await import('./manager.ts')
  return CollaborationManager.create(config)
}
