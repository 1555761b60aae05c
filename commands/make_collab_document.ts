import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { stubsRoot } from '../stubs/main.ts'

const ANCHORS = ['text-range', 'canvas-object', 'timestamp']

/**
 * Creates a collaboration document declaration in app/collaboration.
 */
export default class MakeCollabDocument extends BaseCommand {
  static commandName = 'make:collab-document'
  static description =
    'Create a collaboration document declaration (pattern, rule, seed, comment spaces)'
  static options: CommandOptions = { allowUnknownFlags: false }

  @args.string({ description: 'Name of the document collection, e.g. notes' })
  declare name: string

  @flags.array({ description: 'Comment spaces, e.g. --spaces=review,notes' })
  declare spaces?: string[]

  @flags.array({ description: 'Comment anchors: text-range, canvas-object, timestamp' })
  declare anchors?: string[]

  @flags.boolean({ description: 'Overwrite an existing file' })
  declare force?: boolean

  async run() {
    const split = (values?: string[]) =>
      (values ?? [])
        .flatMap((value) => value.split(','))
        .map((value) => value.trim())
        .filter(Boolean)
    const spaces = split(this.spaces)
    const anchors = split(this.anchors)
    const unknown = anchors.filter((anchor) => !ANCHORS.includes(anchor))
    if (unknown.length) {
      this.logger.error(`Unknown anchor "${unknown.join('", "')}". Use ${ANCHORS.join(', ')}`)
      this.exitCode = 1
      return
    }
    const entity = this.app.generators.createEntity(this.name)
    const codemods = await this.createCodemods()
    codemods.overwriteExisting = this.force === true
    await codemods.makeUsingStub(stubsRoot, 'make/collab_document/main.stub', {
      entity,
      pattern: `${this.name.replace(/^\/+|\/+$/g, '')}/:id`,
      spaces: JSON.stringify(spaces.length ? spaces : ['default']),
      anchors: JSON.stringify(anchors.length ? anchors : ['text-range']),
    })
  }
}
