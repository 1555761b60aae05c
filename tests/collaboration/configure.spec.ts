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
    await assert.fileContains('config/collaboration.ts', "engine: 'crdt_a'")
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

  test('collaboration:init --engine=hosted_a publishes the hosted config', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(CollaborationInit, ['--engine=hosted_a', '--no-install'])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    await assert.fileContains('config/collaboration.ts', "engine: 'hosted_a'")
    await assert.fileContains('config/collaboration.ts', 'COLLAB_ROOM_HOST')
    const wrong = await ace.create(CollaborationInit, ['--engine=crdt_z', '--no-install'])
    await wrong.exec()
    assert.equal(wrong.exitCode, 1)
  })

  test('make:collab-document writes a declaration with its spaces and anchors', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(MakeCollabDocument, [
      'meeting_notes',
      '--spaces=review,notes',
      '--anchors=text-range,timestamp',
    ])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    const file = 'app/collaboration/meeting_notes_document.ts'
    await assert.fileContains(file, 'export const meetingNotesDocument = defineDocument')
    await assert.fileContains(file, '["review","notes"] as const')
    await assert.fileContains(file, '["text-range","timestamp"]')
    await assert.fileContains(file, "'meeting_notes/:id'")
    const bad = await ace.create(MakeCollabDocument, ['x', '--anchors=circle'])
    await bad.exec()
    assert.equal(bad.exitCode, 1)
  })
})
