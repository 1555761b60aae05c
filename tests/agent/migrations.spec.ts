import { test } from '@japa/runner'
import { createDatabase } from '../helpers.ts'
import { migrateStubs, rollbackStubs } from '../migration_stubs.ts'
import { AGENT_TABLES } from '../../src/agent/store/lucid.ts'

test.group('Agent migration stubs', () => {
  test('the eight agent stubs create their tables and their down() drops them', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await migrateStubs(db, 'agent')
    for (const table of Object.values(AGENT_TABLES)) {
      assert.isTrue(await db.connection().schema.hasTable(table), table)
    }
    // The unique key that keeps a tool call from running twice
    await db.table('agent_threads').insert({
      id: 't1',
      actor_ref: 'a',
      created_at: new Date(),
      updated_at: new Date(),
    })
    await db.table('agent_runs').insert({
      id: 'r1',
      thread_id: 't1',
      actor_ref: 'a',
      agent_name: 'x',
      status: 'running',
      created_at: new Date(),
    })
    const call = {
      run_id: 'r1',
      thread_id: 't1',
      actor_ref: 'a',
      tool_call_id: 'call_1',
      tool_name: 'x',
      status: 'running',
      input: '{}',
      created_at: new Date(),
      updated_at: new Date(),
    }
    await db.table('agent_tool_calls').insert(call)
    await assert.rejects(() => db.table('agent_tool_calls').insert(call))
    await rollbackStubs(db, 'agent')
    for (const table of Object.values(AGENT_TABLES)) {
      assert.isFalse(await db.connection().schema.hasTable(table), table)
    }
  })
})
