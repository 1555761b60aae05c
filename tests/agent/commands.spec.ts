import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from '@japa/runner'
import Configure from '@adonisjs/core/commands/configure'
import MakeAgent from '../../commands/make_agent.ts'
import { agentInstaller } from '../../src/agent/configure.ts'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'

test.group('Agent commands and configure', () => {
  test('make:agent writes an @agent class with a @systemPrompt method', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(MakeAgent, ['billing_support'])
    await command.exec()
    assert.equal(command.exitCode ?? 0, 0)
    const file = 'app/agents/billing_support_agent.ts'
    await assert.fileContains(file, "import { agent, systemPrompt } from 'adonis-atrium/agent'")
    await assert.fileContains(file, "name: 'billing-support'")
    await assert.fileContains(file, 'export default class BillingSupportAgent {')
    await assert.fileContains(file, '@systemPrompt()')

    // An existing file is kept unless --force
    await fs.create(file, 'edited by hand')
    const kept = await ace.create(MakeAgent, ['billing_support'])
    await kept.exec()
    assert.equal(await fs.contents(file), 'edited by hand')
    const forced = await ace.create(MakeAgent, ['billing_support', '--force'])
    await forced.exec()
    await assert.fileContains(file, 'export default class BillingSupportAgent {')
  })

  test('the installer publishes config/agent.ts, the fifteen migrations once, the provider and the env', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    for (let run = 0; run < 2; run++) {
      const command = await ace.create(Configure, [PACKAGE_ENTRY, '--no-install'])
      await agentInstaller.install(command, await command.createCodemods())
    }
    await assert.fileContains('config/agent.ts', 'actorResolver: actors.auth()')
    // The provider package is named, not imported: a missing one is a boot error, not a crash
    const published = await fs.contents('config/agent.ts')
    assert.include(published, "model: models.anthropic('claude-sonnet-4-5', {")
    assert.notMatch(published, /from '@ai-sdk\//)
    const files = await readdir(join(fs.basePath, 'database/migrations'))
    files.sort()
    assert.lengthOf(files, 16, JSON.stringify(files))
    const tables = [
      'agent_threads',
      'agent_messages',
      'agent_runs',
      'agent_tool_calls',
      'agent_usage',
      'agent_quota',
      'agent_pricing',
      'agent_rollups',
      'agent_model_rollups',
      'agent_actor_rollups',
      'agent_run_rollups',
      'agent_error_rollups',
      'agent_duration_rollups',
      'agent_retry_rollups',
      'agent_messages_attachments',
      'agent_quota_holds',
    ]
    // Sorted by name the timestamps keep foreign keys after the tables they point to
    assert.deepEqual(
      files.map((file) => file.replace(/^\d+_(?:create|alter)_(.+)_table\.ts$/, '$1')),
      tables
    )
    await assert.fileContains(
      files.at(-2)!.replace(/^/, 'database/migrations/'),
      "table.text('attachments').nullable()"
    )
    const rc = await fs.contents('adonisrc.ts')
    assert.equal(rc.split('adonis-atrium/providers/agent_provider').length, 2)
    await assert.fileContains('start/env.ts', 'ANTHROPIC_API_KEY: Env.schema.string.optional()')
    // config/agent.ts imports agent classes through #agents/*, added once
    const manifest = JSON.parse(await fs.contents('package.json'))
    assert.equal(manifest.imports['#agents/*'], './app/agents/*.js')
  })

  test('an app upgrading from the eight migrations gets only the eight it lacks: the narrow rollups, the attachments column, the retry rollups and the quota holds', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const before = [
      'agent_threads',
      'agent_messages',
      'agent_runs',
      'agent_tool_calls',
      'agent_usage',
      'agent_quota',
      'agent_pricing',
      'agent_rollups',
    ]
    for (const [index, table] of before.entries()) {
      await fs.create(`database/migrations/${1000 + index}_create_${table}_table.ts`, '// ran')
    }
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--no-install'])
    await agentInstaller.install(command, await command.createCodemods())
    const files = await readdir(join(fs.basePath, 'database/migrations'))
    files.sort()
    assert.lengthOf(files, 16, JSON.stringify(files))
    // The existing files are kept as they were; the new ones sort after them
    assert.equal(
      await fs.contents('database/migrations/1007_create_agent_rollups_table.ts'),
      '// ran'
    )
    assert.deepEqual(
      files.slice(8).map((file) => file.replace(/^\d+_(?:create|alter)_(.+)_table\.ts$/, '$1')),
      [
        'agent_model_rollups',
        'agent_actor_rollups',
        'agent_run_rollups',
        'agent_error_rollups',
        'agent_duration_rollups',
        'agent_retry_rollups',
        'agent_messages_attachments',
        'agent_quota_holds',
      ]
    )
  })
})
