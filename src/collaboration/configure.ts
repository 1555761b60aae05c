import type Configure from '@adonisjs/core/commands/configure'
import { publishMigrationOnce, type Codemods, type FeatureInstaller } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import type { CollabEngineName } from './types.ts'

const ENGINES: CollabEngineName[] = ['crdt_a', 'crdt_b', 'hosted_a', 'hosted_b']

/**
 * The libraries the Yjs engine loads lazily.
 */
export const COLLABORATION_PACKAGES = ['yjs', 'y-protocols', 'lib0', 'ws'].map((name) => ({
  name,
  isDevDependency: false,
}))

/**
 * Publishes config/collaboration.ts for one engine, the collab_* migration,
 * the provider and the env variables; installs yjs, y-protocols, lib0 and ws.
 * `collaboration:init` and `node ace add adonis-atrium` share it.
 */
export async function installCollaboration(
  command: Pick<Configure, 'app' | 'logger' | 'prompt'> & { exitCode?: number },
  codemods: Codemods,
  engine: string = 'crdt_a',
  installFlag?: boolean
) {
  if (!ENGINES.includes(engine as CollabEngineName)) {
    command.logger.error(`Unknown engine "${engine}". Use one of ${ENGINES.join(', ')}`)
    command.exitCode = 1
    return
  }
  await codemods.makeUsingStub(stubsRoot, 'config/collaboration.stub', {
    engine,
    hostedBlock: engine.startsWith('hosted')
      ? "\n  hosted: {\n    roomHost: env.get('COLLAB_ROOM_HOST'),\n    jwtSecret: env.get('COLLAB_HOSTED_JWT_SECRET'),\n  },"
      : '',
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
      ...(engine.startsWith('hosted')
        ? {
            COLLAB_ROOM_HOST: 'Env.schema.string()',
            COLLAB_HOSTED_JWT_SECRET: 'Env.schema.string()',
          }
        : {}),
    },
  })

  let install = installFlag
  if (install === undefined) {
    install = await command.prompt.confirm(
      'Install yjs, y-protocols, lib0 and ws (the collaboration server needs them)?'
    )
  }
  if (install) {
    await codemods.installPackages(COLLABORATION_PACKAGES)
  } else {
    await codemods.listPackagesToInstall(COLLABORATION_PACKAGES)
  }
}

/**
 * The collaboration feature of `node ace add adonis-atrium`.
 */
export const collaborationInstaller: FeatureInstaller = {
  name: 'collaboration',
  description: 'Collaboration: Yjs documents over WebSocket, versions, comments and presence',
  async install(command, codemods) {
    const engine = command.parsedFlags.engine
    await installCollaboration(
      command,
      codemods,
      typeof engine === 'string' ? engine : 'crdt_a',
      command.parsedFlags.install as boolean | undefined
    )
  },
}
