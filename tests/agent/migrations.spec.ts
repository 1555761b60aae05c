import { test } from '@japa/runner'
import { createDatabase } from '../helpers.ts'
import { migrateStubs, rollbackStubs, runStub } from '../migration_stubs.ts'
import { AGENT_TABLES } from '../../src/agent/store/lucid.ts'

test.group('Agent migration stubs', () => {
  test('the fifteen agent stubs create their tables and their down() drops them', async ({
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

  test('the narrow rollups of an upgrading app start from the sums of its agent_rollups', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await migrateStubs(db, 'agent')
    const narrow = ['agent_model_rollups', 'agent_actor_rollups', 'agent_run_rollups']
    for (const name of narrow) await runStub(db, name, 'down')
    const row = { day: '2026-01-02', agent_name: 'support' }
    const rows = [
      { ...row, model: 'm1', actor_ref: 'ann', model_calls: 2, cost: 300, runs_succeeded: 1 },
      { ...row, model: 'm1', actor_ref: 'bob', model_calls: 1, cost: 100, runs_failed: 1 },
      { ...row, model: 'm2', actor_ref: 'ann', model_calls: 1, cost: 50 },
      // Run ends only: no spend row for m3
      { ...row, model: 'm3', actor_ref: 'cid', runs_cancelled: 2 },
    ]
    // One by one: a multi-row insert of SQLite would fill the missing counters with null
    for (const each of rows) await db.table('agent_rollups').insert(each)
    for (const name of narrow) await runStub(db, name, 'up')
    const spend = async (table: string, key: string) => {
      const found = await db.from(table).orderBy(key)
      return found.map((each: any) => [each[key], Number(each.model_calls), Number(each.cost)])
    }
    assert.deepEqual(await spend('agent_model_rollups', 'model'), [
      ['m1', 3, 400],
      ['m2', 1, 50],
    ])
    assert.deepEqual(await spend('agent_actor_rollups', 'actor_ref'), [
      ['ann', 3, 350],
      ['bob', 1, 100],
    ])
    const runs = await db.from('agent_run_rollups')
    assert.deepEqual(
      runs.map((each: any) => [
        each.day,
        each.agent_name,
        Number(each.runs_succeeded),
        Number(each.runs_failed),
        Number(each.runs_cancelled),
      ]),
      [['2026-01-02', 'support', 1, 1, 2]]
    )
    await rollbackStubs(db, 'agent')
  })

  test('the attachments migration adds the column to existing messages and its down() drops it', async ({
    assert,
  }) => {
    const db = await createDatabase()
    await migrateStubs(db, 'agent')
    await runStub(db, 'agent_messages_attachments', 'down')
    assert.isFalse(await db.connection().schema.hasColumn('agent_messages', 'attachments'))
    // A message written before the upgrade keeps its row, with no attachments
    await db.table('agent_threads').insert({
      id: 't1',
      actor_ref: 'a',
      created_at: new Date(),
      updated_at: new Date(),
    })
    await db.table('agent_messages').insert({
      thread_id: 't1',
      role: 'user',
      content: 'before',
      created_at: new Date(),
    })
    await runStub(db, 'agent_messages_attachments', 'up')
    assert.isTrue(await db.connection().schema.hasColumn('agent_messages', 'attachments'))
    const [before] = await db.from('agent_messages')
    assert.equal(before.content, 'before')
    assert.isNull(before.attachments)
    const attachments = [{ id: 'x', name: 'a.png', contentType: 'image/png', size: 3 }]
    await db.table('agent_messages').insert({
      thread_id: 't1',
      role: 'user',
      content: 'after',
      attachments: JSON.stringify(attachments),
      created_at: new Date(),
    })
    const [after] = await db.from('agent_messages').where('content', 'after')
    assert.deepEqual(JSON.parse(after.attachments), attachments)
    await rollbackStubs(db, 'agent')
    assert.isFalse(await db.connection().schema.hasTable('agent_messages'))
  })
})
