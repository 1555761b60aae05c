import { test } from '@japa/runner'
import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import * as prettier from 'prettier'
import { MIGRATION_STUBS } from '../migration_stubs.ts'

/**
 * The demo creates the agent tables the way an app does: with the
 * migrations `configure --features=agent` publishes, unchanged but for the
 * formatting the repository's lint gives every .ts file (two stubs have
 * lines longer than Prettier keeps).
 */
test.group('Demo agent migrations', () => {
  test("the demo's agent migrations are the published stubs as the lint formats them, in their order", async ({
    assert,
  }) => {
    const root = new URL('../../', import.meta.url)
    const folder = new URL('examples/demo/database/migrations/', root)
    const names = await readdir(folder)
    const files = names.filter((name) => /_(create|alter)_agent_/.test(name)).sort()
    const tables = files.map((name) => /_(?:create|alter)_(agent_\w+)_table\.ts$/.exec(name)?.[1])
    // the order configure publishes them in: foreign keys first, the narrow rollups after
    // agent_rollups, the attachments column last
    assert.deepEqual(tables, [...MIGRATION_STUBS.agent])
    for (const [index, file] of files.entries()) {
      const stub = await readFile(
        new URL(`stubs/make/migration/${tables[index]}.stub`, root),
        'utf8'
      )
      const path = fileURLToPath(new URL(file, folder))
      const published = await prettier.format(stub.replace(/^\{\{\{[\s\S]*?\}\}\}\n/, ''), {
        ...(await prettier.resolveConfig(path)),
        parser: 'typescript',
      })
      assert.equal(await readFile(path, 'utf8'), published, file)
    }
  })
})
