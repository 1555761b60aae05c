import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Publishes the collaboration config for an engine, its migration, provider
 * and env variables.
 */
export default class CollaborationInit extends BaseCommand {
  static commandName = 'collaboration:init'
  static description =
    'Configure Atrium collaboration: config, migration, provider and env variables'
  static options: CommandOptions = {}

  @flags.string({
    description:
      'Engine: yjs or automerge (served by this app), partyserver or partykit (a room worker)',
    default: 'yjs',
  })
  declare engine: string

  @flags.string({
    description: 'Where the partyserver/partykit room worker project is written',
    default: 'collaboration-worker',
  })
  declare workerDir: string

  @flags.boolean({
    description:
      'Install the engine packages (yjs, y-protocols, lib0, ws; and @automerge/* for automerge) without asking (--no-install lists them)',
  })
  declare install?: boolean

  async run() {
    const { installCollaboration } = await import('../src/collaboration/configure.ts')
    const codemods = await this.createCodemods()
    await installCollaboration(this, codemods, this.engine, this.install, this.workerDir)
  }
}
