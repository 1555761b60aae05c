/* eslint-disable @unicorn/no-await-expression-member -- tests read responses inline */
import { test } from '@japa/runner'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'
import Configure from '@adonisjs/core/commands/configure'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import MakeCollabDocument from '../../commands/make_collab_document.ts'
import CollaborationInit from '../../commands/collaboration_init.ts'

test.group('Collaboration configure', () => {
  test('publishes config, migration, provider and env once, however often it runs', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    for (let run = 0; run < 2; run++) {
      const command = await ace.create(Configure, [
        PACKAGE_ENTRY,
        '--features=collaboration',
        '--no-install',
      ])
      await command.exec()
      assert.equal(command.exitCode, 0, command.error?.message)
    }
    await assert.fileContains('config/collaboration.ts', "engine: 'yjs'")
    await assert.fileContains('config/collaboration.ts', 'relationalStorage()')
    await assert.fileContains('adonisrc.ts', 'adonis-atrium/providers/collaboration_provider')
    await assert.fileContains('start/env.ts', 'COLLAB_TOKEN_SECRET')
    const migrations = (await readdir(join(fs.basePath, 'database/migrations'))).filter((file) =>
      file.endsWith('_create_collaboration_table.ts')
    )
    assert.lengthOf(migrations, 1)
    const rc = await fs.contents('adonisrc.ts')
    assert.equal(rc.split('collaboration_provider').length - 1, 1)
  })

  test('collaboration:init refuses an engine that does not exist, without a prompt', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    for (const engine of ['crdt_z', 'quill']) {
      const command = await ace.create(CollaborationInit, [`--engine=${engine}`, '--no-install'])
      await command.exec()
      assert.equal(command.exitCode, 1, engine)
      assert.match(
        command.logger.getLogs().at(-1)!.message,
        /Use --engine=yjs or --engine=automerge or --engine=partykit or --engine=partyserver/
      )
    }
    await assert.fileNotExists('config/collaboration.ts')
    // no --install/--no-install and no terminal: the packages are listed, not installed
    const command = await ace.create(CollaborationInit, ['--engine=crdt_a'])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    await assert.fileContains('config/collaboration.ts', "engine: 'yjs'")
  })

  test('collaboration:init --engine=partyserver publishes the hosted config and scaffolds the room worker once', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    await fs.create('collaboration-worker/src/server.ts', '// edited by the team')
    const command = await ace.create(CollaborationInit, ['--engine=hosted_b', '--no-install'])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    await assert.fileContains('config/collaboration.ts', "engine: 'partyserver'")
    await assert.fileContains('config/collaboration.ts', "jwtSecret: env.get('COLLAB_JWT_SECRET')")
    await assert.fileContains('start/env.ts', 'COLLAB_WORKER_SECRET: Env.schema.string()')
    await assert.fileContains(
      'collaboration-worker/wrangler.jsonc',
      '"class_name": "AtriumDocument"'
    )
    await assert.fileContains('collaboration-worker/src/atrium.ts', 'verifyAtriumToken')
    // a worker the team edited is kept
    assert.equal(await fs.contents('collaboration-worker/src/server.ts'), '// edited by the team')
    assert.isTrue(
      command.logger.getLogs().some((log) => log.message.includes('wrangler secret put'))
    )
  })

  test('collaboration:init --engine=partykit scaffolds the PartyKit room into --worker-dir', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(CollaborationInit, [
      '--engine=partykit',
      '--worker-dir=rooms',
      '--no-install',
    ])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    await assert.fileContains('config/collaboration.ts', "engine: 'partykit'")
    await assert.fileContains('rooms/partykit.json', '"main": "src/server.ts"')
    await assert.fileContains('rooms/src/server.ts', "from 'y-partykit'")
    await assert.fileContains('rooms/src/atrium.ts', 'verifyAtriumToken')
    // the room's own .env, so PartyKit never compiles the app's into the room
    await assert.fileContains('rooms/.env', 'COLLAB_JWT_SECRET=')
    assert.isTrue(
      command.logger
        .getLogs()
        .some(
          (log) => log.message.includes('partykit env add') && log.message.includes('rooms/.env')
        )
    )
  })

  test('make:collab-document writes a collection that denies until its rule is written, and registers it', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const init = await ace.create(CollaborationInit, ['--no-install'])
    await init.exec()
    const command = await ace.create(MakeCollabDocument, ['meeting_notes'])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    const file = 'app/collaboration/meeting_notes_document.ts'
    const source = await fs.contents(file)
    assert.include(
      source,
      "export const meetingNotesDocuments = defineCollection('meeting_notes', {"
    )
    assert.include(source, 'return { canRead: false, canWrite: false, canComment: false }')
    assert.notInclude(source, 'Spaces')
    assert.isTrue(source.endsWith('})\n'))
    assert.notMatch(source, /;\n/)

    const config = await fs.contents('config/collaboration.ts')
    assert.include(
      config,
      "import { meetingNotesDocuments } from '../app/collaboration/meeting_notes_document.js'"
    )
    assert.match(config, /documents: \{\s*\.\.\.meetingNotesDocuments,?\s*\}/)
    assert.notMatch(config, /;\n/)

    // a second run registers nothing twice
    const again = await ace.create(MakeCollabDocument, ['meeting_notes', '--force'])
    await again.exec()
    assert.equal(
      (await fs.contents('config/collaboration.ts')).split('...meetingNotesDocuments').length,
      2
    )

    const bad = await ace.create(MakeCollabDocument, ['../x'])
    await bad.exec()
    assert.equal(bad.exitCode, 1)
  })

  test('make:collab-document prints what to add when the config is not the published shape', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    await fs.create('config/collaboration.ts', 'export default {}\n')
    const command = await ace.create(MakeCollabDocument, ['notes'])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    assert.equal(await fs.contents('config/collaboration.ts'), 'export default {}\n')
    const logs = command.logger
      .getLogs()
      .map(({ message }) => message)
      .join('\n')
    assert.include(logs, "import { notesDocuments } from '../app/collaboration/notes_document.js'")
  })
})
