import type Configure from '@adonisjs/core/commands/configure'
import {
  installOrListPackages,
  publishMigrationOnce,
  type Codemods,
  type FeatureInstaller,
} from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { engineOf, SERVED_ENGINES } from './define_config.ts'

/**
 * The libraries the Yjs engine loads lazily.
 */
export const COLLABORATION_PACKAGES = ['yjs', 'y-protocols', 'lib0', 'ws'].map((name) => ({
  name,
  isDevDependency: false,
}))

type InstallCommand = Pick<Configure, 'app' | 'logger' | 'prompt'> & { exitCode?: number }

/**
 * Publishes config/collaboration.ts for one engine, the collab_* migration,
 * the provider and the env variables; false when the engine is unknown or
 * not served by this release (with a non-zero exit code).
 */
export async function publishCollaboration(
  command: InstallCommand,
  codemods: Codemods,
  engineFlag: string = 'yjs'
) {
  const engine = engineOf(engineFlag)
  if (!engine || !SERVED_ENGINES.includes(engine)) {
    const what = engine
      ? `The "${engine}" engine is not served by this release`
      : `Unknown engine "${engineFlag}"`
    command.logger.error(`${what}. Use --engine=${SERVED_ENGINES.join(' or --engine=')}`)
    command.exitCode = 1
    return false
  }
  await codemods.makeUsingStub(stubsRoot, 'config/collaboration.stub', { engine })
  await publishMigrationOnce(command as Configure, codemods, stubsRoot, {
    stub: 'make/migration/collaboration.stub',
    tableName: 'collaboration',
  })
  await codemods.updateRcFile((rcFile) => {
    rcFile.addProvider('adonis-atrium/providers/collaboration_provider')
  })
  await codemods.defineEnvValidations({
    leadingComment: 'Variables for Atrium collaboration',
    variables: {
      COLLAB_TOKEN_SECRET: 'Env.schema.string.optional()',
      COLLAB_REDIS_URL: 'Env.schema.string.optional()',
    },
  })
  return true
}

/**
 * `collaboration:init`: publishes the feature, then installs yjs, y-protocols,
 * lib0 and ws (`--install`), lists them (`--no-install`) or asks (terminal only).
 */
export async function installCollaboration(
  command: InstallCommand,
  codemods: Codemods,
  engine: string = 'yjs',
  installFlag?: boolean
) {
  if (await publishCollaboration(command, codemods, engine)) {
    await installOrListPackages(command, codemods, COLLABORATION_PACKAGES, installFlag)
  }
}

/**
 * The collaboration feature of `node ace add adonis-atrium`.
 */
export const collaborationInstaller: FeatureInstaller = {
  name: 'collaboration',
  description: 'Collaboration: Yjs documents over WebSocket, versions, comments and presence',
  // configure installs or lists them with the other features' packages
  packages: COLLABORATION_PACKAGES,
  async install(command, codemods) {
    const engine = command.parsedFlags.engine
    await publishCollaboration(command, codemods, typeof engine === 'string' ? engine : 'yjs')
  },
}
