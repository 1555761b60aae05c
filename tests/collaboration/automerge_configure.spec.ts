import { test } from '@japa/runner'
import { setupConsoleApp } from '../helpers.ts'
import CollaborationInit from '../../commands/collaboration_init.ts'
import { assertCollaborationPackages, collaborationPackages } from '../../src/collaboration/boot.ts'

test.group('Automerge: collaboration:init and boot checks', () => {
  test('collaboration:init --engine=automerge publishes an Automerge config and lists its packages', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(CollaborationInit, ['--engine=automerge', '--no-install'])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    await assert.fileContains('config/collaboration.ts', "engine: 'automerge'")
    await assert.fileContains('config/collaboration.ts', 'automerge-repo sync protocol')
    await assert.fileNotContains('config/collaboration.ts', 'y-websocket protocol')
    const logs = command.logger
      .getLogs()
      .map(({ message }) => message)
      .join('\n')
    for (const name of [
      '@automerge/automerge-repo',
      '@automerge/automerge',
      '@automerge/automerge-repo-network-websocket',
      'yjs',
    ]) {
      assert.include(logs, name)
    }
  })

  test('the alias crdt_b scaffolds the same engine', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(CollaborationInit, ['--engine=crdt_b', '--no-install'])
    await command.exec()
    assert.equal(command.exitCode, 0, command.error?.message)
    await assert.fileContains('config/collaboration.ts', "engine: 'automerge'")
  })

  test('a config naming Automerge needs its packages: one line naming the install command', ({
    assert,
  }) => {
    const base = { redis: undefined, redisUrl: undefined }
    assert.notInclude(collaborationPackages({ ...base, engine: 'yjs' }), '@automerge/automerge')
    const packages = collaborationPackages({
      ...base,
      engine: 'yjs',
      documents: { 'todos/:id': { engine: 'crdt_b' } },
    })
    assert.includeMembers(packages, ['@automerge/automerge-repo', '@automerge/automerge'])
    const missing = (specifier: string) => {
      if (specifier.startsWith('@automerge/')) throw new Error('not installed')
      return specifier
    }
    assert.throws(
      () => assertCollaborationPackages(packages, missing),
      /needs "@automerge\/automerge-repo", "@automerge\/automerge", which are not installed. Run: npm install @automerge\/automerge-repo @automerge\/automerge$/
    )
  })
})
