import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from '@japa/runner'
import Configure from '@adonisjs/core/commands/configure'
import type { FileSystem } from '@japa/file-system'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'
import { consoleInstaller } from '../../src/console/configure.ts'

async function install(fs: FileSystem) {
  const ace = await setupConsoleApp(fs)
  const command = await ace.create(Configure, [PACKAGE_ENTRY, '--no-install'])
  await consoleInstaller.install(command, await command.createCodemods())
  return command
}

test.group('Console configure', () => {
  test('publishes the config on the embedded store, the console_entries, console_rollups, console_entries_search and console_leases migrations once, the provider and the env variable', async ({
    assert,
    fs,
  }) => {
    await install(fs)
    await install(fs)

    await assert.fileContains('config/console.ts', "from 'adonis-atrium/console'")
    await assert.fileContains('config/console.ts', 'storage: stores.embedded(),')
    await assert.fileContains('config/console.ts', 'watchers.queries({ slowMs: 100 })')
    const files = await readdir(join(fs.basePath, 'database/migrations'))
    assert.lengthOf(files, 4, JSON.stringify(files))
    // in timestamp order: the search migration alters console_entries, so it runs after it
    const [entries, rollups, search, leases] = files.sort()
    assert.match(entries, /^\d+_create_console_entries_table\.ts$/)
    assert.match(rollups, /^\d+_create_console_rollups_table\.ts$/)
    assert.match(search, /^\d+_create_console_entries_search_table\.ts$/)
    assert.match(leases, /^\d+_create_console_leases_table\.ts$/)
    await assert.fileContains(`database/migrations/${leases}`, "tableName = 'console_leases'")
    await assert.fileContains(`database/migrations/${search}`, 'USING fts5')
    await assert.fileContains(`database/migrations/${entries}`, 'createTable(this.tableName')
    await assert.fileContains(`database/migrations/${rollups}`, "tableName = 'console_rollups'")
    const rc = await fs.contents('adonisrc.ts')
    assert.equal(rc.split('adonis-atrium/providers/console_provider').length, 2)
    await assert.fileContains(
      'start/env.ts',
      'CONSOLE_SESSION_SECRET: Env.schema.string.optional()'
    )
    await assert.fileContains('.env', 'CONSOLE_SESSION_SECRET')
    // the embedded store registers its connection at boot: config/database.ts is not touched
    await assert.fileNotExists('config/database.ts')
  }).timeout(60_000)
})
