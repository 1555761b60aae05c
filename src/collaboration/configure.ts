import type Configure from '@adonisjs/core/commands/configure'
import { publishMigrationOnce, type Codemods, type FeatureInstaller } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { engineOf, SERVED_ENGINES } from './define_config.ts'

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
 * `collaboration:init` and `node ace add adonis-atrium` share it. An engine
 * this release does not serve is refused with a non-zero exit code.
 */
export async function installCollaboration(
  command: Pick<Configure, 'app' | 'logger' | 'prompt'> & { exitCode?: number },
  codemods: Codemods,
  engineFlag: string = 'yjs',
  installFlag?: boolean
) {
  const engine = engineOf(engineFlag)
  if (!engine || !SERVED_ENGINES.includes(engine)) {
    const what = engine
      ? `The "${engine}" engine is not served by this release`
      : `Unknown engine "${engineFlag}"`
    command.logger.error(`${what}. Use --engine=${SERVED_ENGINES.join(' or --engine=')}`)
    command.exitCode = 1
    return
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

  let install = installFlag
  // without a terminal to ask, the default is to list the packages, not install them
  if (install === undefined && !process.stdin.isTTY) {
    install = false
  }
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
      typeof engine === 'string' ? engine : 'yjs',
      command.parsedFlags.install as boolean | undefined
    )
  },
}
