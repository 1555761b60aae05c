import type Configure from '@adonisjs/core/commands/configure'
import {
  installOrListPackages,
  publishMigrationOnce,
  type Codemods,
  type FeatureInstaller,
} from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { engineOf, SERVED_ENGINES } from './define_config.ts'
import { scaffoldHostedWorker, type HostedEngineName } from './hosted_worker.ts'

/** Where `collaboration:init --engine=partyserver|partykit` writes the room worker project */
export const DEFAULT_WORKER_DIR = 'collaboration-worker'

function isHostedEngine(engine: string): engine is HostedEngineName {
  return engine === 'partykit' || engine === 'partyserver'
}

/**
 * The libraries the Yjs engine loads lazily.
 */
export const COLLABORATION_PACKAGES = ['yjs', 'y-protocols', 'lib0', 'ws'].map((name) => ({
  name,
  isDevDependency: false,
}))

/**
 * What the Automerge engine adds: automerge-repo and Automerge on the server,
 * and the WebSocket network adapter its clients connect with.
 */
export const AUTOMERGE_PACKAGES = [
  '@automerge/automerge-repo',
  '@automerge/automerge',
  '@automerge/automerge-repo-network-websocket',
].map((name) => ({ name, isDevDependency: false }))

/** The packages of the engine a flag names (the Yjs ones for an unknown flag) */
export function packagesForEngine(engineFlag: string) {
  return engineOf(engineFlag) === 'automerge'
    ? [...COLLABORATION_PACKAGES, ...AUTOMERGE_PACKAGES]
    : COLLABORATION_PACKAGES
}

type InstallCommand = Pick<Configure, 'app' | 'logger' | 'prompt'> & { exitCode?: number }

/**
 * Publishes config/collaboration.ts for one engine, the collab_* migration,
 * the provider and the env variables; false when the engine is unknown or
 * not served by this release (with a non-zero exit code).
 */
export async function publishCollaboration(
  command: InstallCommand,
  codemods: Codemods,
  engineFlag: string = 'yjs',
  workerDir: string = DEFAULT_WORKER_DIR
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
  const hosted = isHostedEngine(engine)
  await codemods.makeUsingStub(stubsRoot, 'config/collaboration.stub', {
    engine,
    hosted,
    workerDir,
  })
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
      ...(hosted
        ? {
            COLLAB_ROOM_HOST: 'Env.schema.string()',
            COLLAB_JWT_SECRET: 'Env.schema.string()',
            COLLAB_WORKER_SECRET: 'Env.schema.string()',
          }
        : {}),
    },
  })
  if (hosted) {
    await publishHostedWorker(command, engine, workerDir)
  }
  return true
}

/**
 * Writes the room worker project and says what to set on both sides.
 */
async function publishHostedWorker(
  command: InstallCommand,
  engine: HostedEngineName,
  workerDir: string
) {
  const { written, kept } = await scaffoldHostedWorker(engine, command.app.makePath(workerDir))
  for (const file of written) {
    command.logger.action(`create ${command.app.relativePath(file)}`).succeeded()
  }
  for (const file of kept) {
    command.logger.action(`create ${command.app.relativePath(file)}`).skipped('already exists')
  }
  const deploy = engine === 'partyserver' ? 'npx wrangler deploy' : 'npx partykit deploy'
  const secret = engine === 'partyserver' ? 'npx wrangler secret put' : 'npx partykit env add'
  // PartyKit compiles the nearest .env into the room: the scaffold's own must stay
  const localSecrets =
    engine === 'partykit'
      ? ` (for "npx partykit dev", in ${workerDir}/.env; keep that file even empty, or PartyKit compiles the app's .env into the room)`
      : ''
  command.logger.info(
    `Room worker in ${workerDir}/: set APP_URL in its config, run "${secret} COLLAB_JWT_SECRET" and "${secret} COLLAB_WORKER_SECRET" with the values of the app's .env${localSecrets}, then "${deploy}" and set COLLAB_ROOM_HOST to the worker's host`
  )
}

/**
 * `collaboration:init`: publishes the feature, then installs yjs, y-protocols,
 * lib0 and ws, plus automerge-repo, Automerge and its WebSocket adapter for
 * `--engine=automerge` (`--install`), lists them (`--no-install`) or asks
 * (terminal only).
 */
export async function installCollaboration(
  command: InstallCommand,
  codemods: Codemods,
  engine: string = 'yjs',
  installFlag?: boolean,
  workerDir?: string
) {
  if (await publishCollaboration(command, codemods, engine, workerDir)) {
    await installOrListPackages(command, codemods, packagesForEngine(engine), installFlag)
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
    const published = await publishCollaboration(
      command,
      codemods,
      typeof engine === 'string' ? engine : 'yjs'
    )
    if (!published) return false
  },
}
