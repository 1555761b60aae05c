import { readFile, writeFile } from 'node:fs/promises'
import { posix } from 'node:path'
import { BaseCommand, args, flags } from '@adonisjs/core/ace'
import string from '@adonisjs/core/helpers/string'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { stubsRoot } from '../stubs/main.ts'

/**
 * Creates a collaboration document declaration in app/collaboration and
 * registers it in config/collaboration.ts. The declaration denies every
 * access until its rule is written.
 */
export default class MakeCollabDocument extends BaseCommand {
  static commandName = 'make:collab-document'
  static description =
    'Create a collaboration document collection (pattern and rule) and register it in config/collaboration.ts'
  static options: CommandOptions = { allowUnknownFlags: false }

  @args.string({
    description: 'Name of the document collection, e.g. notes (documents "notes/:id")',
  })
  declare name: string

  @flags.boolean({ description: 'Overwrite an existing file' })
  declare force?: boolean

  async run() {
    const prefix = this.name.replace(/^\/+|\/+$/g, '')
    if (!prefix || prefix.split('/').some((segment) => !segment || !/^[\w-]+$/.test(segment))) {
      this.logger.error(
        `Invalid collection name "${this.name}": use letters, digits, "_" and "-", with "/" between segments (notes, team/notes)`
      )
      this.exitCode = 1
      return
    }
    const entity = this.app.generators.createEntity(prefix)
    const collection = `${string.camelCase(entity.name)}Documents`
    const codemods = await this.createCodemods()
    codemods.overwriteExisting = this.force === true
    const output = await codemods.makeUsingStub(stubsRoot, 'make/collab_document/main.stub', {
      entity,
      prefix,
    })
    if (output.status === 'skipped') {
      return
    }
    // the stub renderer trims the last newline that editors and Prettier keep
    const written = await readFile(output.destination, 'utf8')
    if (!written.endsWith('\n')) {
      await writeFile(output.destination, `${written}\n`)
    }

    const configPath = this.app.configPath('collaboration.ts')
    const fileName = `${string.snakeCase(entity.name)}_document.js`
    const importPath = posix.join('..', 'app', 'collaboration', entity.path, fileName)
    const project = await codemods.getTsMorphProject()
    let registered: 'added' | 'present' | false = false
    if (project) {
      const { registerCollaborationDocument } =
        await import('../src/collaboration/register_document.ts')
      registered = await registerCollaborationDocument(project, configPath, collection, importPath)
    }
    if (registered === 'added') {
      this.logger.action('update config/collaboration.ts').succeeded()
    } else if (registered === false) {
      this.logger.info(
        `Register it in config/collaboration.ts:\n  import { ${collection} } from '${importPath}'\n  documents: { ...${collection} }`
      )
    }
  }
}
