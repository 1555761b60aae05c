import { test } from '@japa/runner'
import { createDatabase } from '../helpers.ts'
import { migrateStubs, rollbackStubs } from '../migration_stubs.ts'

test.group('Console migration stub', () => {
  test('the console_rollups stub keeps one row per minute, method and route, case-sensitive', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await migrateStubs(db, 'console')
    const row = { minute: 60_000, method: 'GET', route: '/users', histogram: '' }
    await db.connection().table('console_rollups').insert(row)
    await db
      .connection()
      .table('console_rollups')
      .insert({ ...row, route: '/Users' })
    await assert.rejects(() => db.connection().table('console_rollups').insert(row))
    await rollbackStubs(db, 'console')
  })

  test('the console_entries stub creates its table with both indexes and rolls back', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await migrateStubs(db, 'console')
    assert.isTrue(await db.connection().schema.hasTable('console_entries'))
    for (const column of ['id', 'batch_id', 'type', 'tags', 'created_at', 'content']) {
      assert.isTrue(await db.connection().schema.hasColumn('console_entries', column), column)
    }
    // a content far over 64 KiB fits (MariaDB's TEXT would refuse it)
    await db
      .connection()
      .table('console_entries')
      .insert({
        id: '0'.repeat(24),
        batch_id: '0'.repeat(24),
        type: 'request',
        summary: 'GET /',
        slow: false,
        tags: '',
        created_at: Date.now(),
        content: JSON.stringify({ body: 'x'.repeat(200_000) }),
      })
    const row = await db.connection().from('console_entries').first()
    assert.lengthOf(JSON.parse(row.content).body, 200_000)
    await rollbackStubs(db, 'console')
    assert.isFalse(await db.connection().schema.hasTable('console_entries'))
    assert.isFalse(await db.connection().schema.hasTable('console_rollups'))
    assert.isFalse(await db.connection().schema.hasTable('console_entries_search'))
  })
})
