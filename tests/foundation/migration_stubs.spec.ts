import { test } from '@japa/runner'
import { createDatabase } from '../helpers.ts'
import { migrateStubs, rollbackStubs } from '../migration_stubs.ts'

test.group('Migration stubs as test schema', () => {
  test('the payments and collaboration stubs create their tables and roll back', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await migrateStubs(db, 'payments', 'collaboration')
    for (const table of ['billing_webhook_events', 'billing_payments', 'collab_documents']) {
      assert.isTrue(await db.connection().schema.hasTable(table), table)
    }
    await rollbackStubs(db, 'payments', 'collaboration')
    assert.isFalse(await db.connection().schema.hasTable('billing_payments'))
    assert.isFalse(await db.connection().schema.hasTable('collab_documents'))
  })
})
