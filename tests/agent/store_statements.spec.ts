import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { AgentMessage, AgentRun, AgentThread } from '../../src/agent/models/main.ts'
import { LucidAgentStore } from '../../src/agent/main.ts'
import { SqliteTurnStatements } from '../../src/agent/store/sqlite_turn.ts'
import { dialect } from '../helpers.ts'
import { agentApp } from './helpers.ts'

const COLUMNS = {
  agent_threads: ['id', 'actor_ref', 'title', 'default_agent', 'created_at', 'updated_at'],
  agent_runs: [
    'id',
    'thread_id',
    'actor_ref',
    'agent_name',
    'status',
    'error_code',
    'steps',
    'retries',
    'created_at',
    'finished_at',
    'duration_ms',
  ],
  agent_messages: [
    'id',
    'thread_id',
    'run_id',
    'role',
    'content',
    'tool_calls',
    'tool_results',
    'follow_ups',
    'attachments',
    'created_at',
  ],
} as const

/** The Lucid database of the app, which the models use too */
async function appDb() {
  const app = await agentApp()
  const db: Database = await app.app.container.make('lucid.db' as any)
  return { app, db }
}

/** One turn's writes and reads before the model call, as the gateway makes them */
async function turnRows(store: LucidAgentStore) {
  const thread = await store.createThread({ actorRef: 'alice', title: 'Prices' })
  const runId = randomUUID()
  await store.createRun({ id: runId, threadId: thread.id, actorRef: 'alice', agentName: 'default' })
  const question = await store.appendMessage({
    threadId: thread.id,
    runId,
    role: 'user',
    content: 'What does "ünïcode" cost?',
    attachments: [{ id: 'f1', name: 'a.pdf', contentType: 'application/pdf', size: 3 }],
  })
  const answer = await store.appendMessage({
    threadId: thread.id,
    runId,
    role: 'assistant',
    content: '',
    toolCalls: [{ toolCallId: 'call_1', toolName: 'price', input: { n: 1.5, ok: true } }],
  })
  const results = await store.appendMessage({
    threadId: thread.id,
    runId: null,
    role: 'tool',
    content: '',
    toolResults: [{ toolCallId: 'call_1', toolName: 'price', output: null }],
  })
  return { thread, runId, messages: [question, answer, results] }
}

type Written = Awaited<ReturnType<typeof turnRows>>

/**
 * What SQLite stores, column by column: `typeof()` (its storage class) and
 * `quote()` (the value as an SQL literal, so the exact bytes), the turn's
 * ids and times replaced by what they must equal.
 */
async function storedOnSqlite(db: Database, written: Written) {
  const read = async (table: keyof typeof COLUMNS, where: string, value: unknown) => {
    const select = COLUMNS[table]
      .map((column) => `typeof(${column}) || ':' || quote(${column}) as ${column}`)
      .join(', ')
    const rows = await db.rawQuery(`select ${select} from ${table} where ${where} order by 1`, [
      value as string,
    ])
    return rows
  }
  const ms = (date: Date | null) => String(date?.getTime())
  const replace = (row: Record<string, string>, known: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(row).map(([column, stored]) => {
        const name = Object.entries(known).find(([, literal]) => stored === literal)?.[0]
        return [column, name ?? stored]
      })
    )
  const known = {
    thread: `text:'${written.thread.id}'`,
    run: `text:'${written.runId}'`,
    threadCreated: `integer:${ms(written.thread.createdAt)}`,
    ...Object.fromEntries(
      written.messages.flatMap((message, index) => [
        [`message${index}`, `integer:${message.id}`],
        [`message${index}Created`, `integer:${ms(message.createdAt)}`],
      ])
    ),
  }
  const [thread] = await read('agent_threads', 'id = ?', written.thread.id)
  const [run] = await read('agent_runs', 'id = ?', written.runId)
  const messages = await read('agent_messages', 'thread_id = ?', written.thread.id)
  return {
    thread: replace(thread, known),
    // The run's creation time is taken inside the store: its storage class is what must match
    run: { ...replace(run, known), created_at: String(run.created_at).split(':')[0] },
    messages: messages.map((row: Record<string, string>) => replace(row, known)),
  }
}

/** The rows read back through the Lucid models, ids and times replaced likewise */
async function readByModels(written: Written): Promise<Record<string, any>> {
  const threadModel = await AgentThread.findOrFail(written.thread.id)
  const runModel = await AgentRun.findOrFail(written.runId)
  const messageModels = await AgentMessage.query()
    .where('threadId', written.thread.id)
    .orderBy('id')
  const thread: Record<string, any> = { ...threadModel.$attributes }
  const run: Record<string, any> = { ...runModel.$attributes }
  const messages: Record<string, any>[] = messageModels.map((model) => ({ ...model.$attributes }))
  const lastMessage = written.messages.at(-1)!
  return {
    thread: {
      ...thread,
      id: typeof thread.id,
      createdAt: thread.createdAt.getTime() === written.thread.createdAt!.getTime(),
      // The thread is touched by each message appended to it
      updatedAt: thread.updatedAt.getTime() === lastMessage.createdAt!.getTime(),
    },
    run: {
      ...run,
      id: typeof run.id,
      threadId: typeof run.threadId,
      createdAt: typeof run.createdAt,
    },
    messages: messages.map((message, index) => ({
      ...message,
      id: message.id === written.messages[index].id,
      threadId: typeof message.threadId,
      runId: message.runId === null ? null : message.runId === written.runId,
      createdAt: message.createdAt.getTime() === written.messages[index].createdAt!.getTime(),
    })),
  }
}

test.group('Agent store: prepared statements on better-sqlite3', () => {
  test('a turn writes the same rows with and without prepared statements, read back the same by the models', async ({
    assert,
  }) => {
    const { db } = await appDb()
    const prepared = await turnRows(new LucidAgentStore(db))
    const lucid = await turnRows(new LucidAgentStore(db, undefined, { preparedStatements: false }))

    const byModels = await readByModels(prepared)
    assert.deepEqual(byModels, await readByModels(lucid))
    assert.equal(byModels.thread.title, 'Prices')
    assert.isTrue(byModels.thread.createdAt)
    assert.isTrue(byModels.thread.updatedAt)
    assert.deepEqual(
      byModels.messages.map((message: Record<string, any>) => [
        message.id,
        message.runId,
        message.createdAt,
      ]),
      [
        [true, true, true],
        [true, true, true],
        [true, null, true],
      ]
    )
    assert.deepEqual(byModels.messages[0].attachments, [
      { id: 'f1', name: 'a.pdf', contentType: 'application/pdf', size: 3 },
    ])
    assert.deepEqual(byModels.messages[1].toolCalls, [
      { toolCallId: 'call_1', toolName: 'price', input: { n: 1.5, ok: true } },
    ])
    assert.isNull(byModels.messages[0].toolCalls)
    assert.isNull(byModels.run.finishedAt)

    // Both stores read back what either wrote
    for (const store of [
      new LucidAgentStore(db),
      new LucidAgentStore(db, undefined, { preparedStatements: false }),
    ]) {
      assert.deepEqual(await store.findThread(prepared.thread.id), {
        ...prepared.thread,
        updatedAt: prepared.messages.at(-1)!.createdAt,
      })
      assert.deepEqual(await store.listMessages(lucid.thread.id), [
        ...lucid.messages.map((message) => ({ ...message, followUps: null })),
      ])
    }

    if (dialect() === 'sqlite') {
      const stored = await storedOnSqlite(db, prepared)
      assert.deepEqual(stored, await storedOnSqlite(db, lucid))
      assert.equal(stored.thread.created_at, 'threadCreated')
      assert.equal(stored.run.created_at, 'integer')
      assert.deepEqual(
        stored.messages.map((row: Record<string, string>) => [
          row.id,
          row.created_at,
          row.run_id,
          row.tool_calls,
        ]),
        [
          ['message0', 'message0Created', 'run', 'null:NULL'],
          [
            'message1',
            'message1Created',
            'run',
            `text:'[{"toolCallId":"call_1","toolName":"price","input":{"n":1.5,"ok":true}}]'`,
          ],
          ['message2', 'message2Created', 'null:NULL', 'null:NULL'],
        ]
      )
    }
  })

  test('statements are prepared once per connection on better-sqlite3, and never on PostgreSQL or MariaDB', async ({
    assert,
  }) => {
    const { db } = await appDb()
    const client = () => db.connection()
    if (dialect() !== 'sqlite') {
      assert.isUndefined(SqliteTurnStatements.forClient(client))
      return
    }
    assert.instanceOf(SqliteTurnStatements.forClient(client), SqliteTurnStatements)
    // Counts what better-sqlite3 is asked to prepare on the pool's one connection
    const knex = db.connection().getWriteClient().client
    const connection = await knex.acquireConnection()
    await knex.releaseConnection(connection)
    const prepare = connection.prepare
    let prepares = 0
    connection.prepare = function (this: unknown, ...args: unknown[]) {
      prepares++
      return prepare.apply(this, args)
    }
    try {
      const preparedStore = new LucidAgentStore(db)
      const lucidStore = new LucidAgentStore(db, undefined, { preparedStatements: false })
      const turn = async (store: LucidAgentStore) => {
        const { thread } = await turnRows(store)
        await store.findThread(thread.id)
        await store.listMessages(thread.id)
      }
      await turn(preparedStore)
      prepares = 0
      await turn(preparedStore)
      assert.equal(prepares, 0)
      await turn(lucidStore)
      assert.isAbove(prepares, 6)
    } finally {
      connection.prepare = prepare
    }
  })

  test('inside a transaction the statements run on its connection: a rollback removes their rows', async ({
    assert,
  }) => {
    const { db } = await appDb()
    const store = new LucidAgentStore(db)
    await db.beginGlobalTransaction()
    let written: Written
    try {
      written = await turnRows(store)
      assert.lengthOf(await store.listMessages(written.thread.id), 3)
      assert.isNotNull(await AgentRun.find(written.runId))
    } finally {
      await db.rollbackGlobalTransaction()
    }
    assert.isNull(await store.findThread(written.thread.id))
    assert.isNull(await AgentRun.find(written.runId))
    assert.lengthOf(await store.listMessages(written.thread.id), 0)
  })

  test('a refused insert rejects and leaves the connection usable', async ({ assert }) => {
    const { db } = await appDb()
    const store = new LucidAgentStore(db)
    const { thread, runId } = await turnRows(store)
    await assert.rejects(() =>
      store.createRun({ id: runId, threadId: thread.id, actorRef: 'alice', agentName: 'default' })
    )
    const found = await store.findThread(thread.id)
    assert.equal(found?.title, 'Prices')
    assert.isNull(await store.findThread("' or 1 = 1 --"))
  })
})

/** The ledger rows of one priced call and one finished run, as the end of a turn writes them */
async function ledgerRows(db: Database, store: LucidAgentStore, actorRef: string) {
  const { thread, runId } = await turnRows(store)
  await db.table('agent_pricing').insert({
    model_id: `priced-${actorRef}`,
    input_price_per_1m: 3_000_000,
    output_price_per_1m: 15_000_000,
    cache_write_price_per_1m: null,
    cache_read_price_per_1m: 300_000,
    effective_from: new Date(Date.now() - 60_000),
    created_at: new Date(),
  })
  const call = {
    runId,
    threadId: thread.id,
    actorRef,
    agentName: 'default',
    kind: 'step' as const,
    step: 1,
    day: '2026-11-25',
    known: true,
    uncachedInputTokens: 1200,
    cacheReadTokens: 300,
    cacheWriteTokens: 0,
    outputTokens: 450,
    reasoningTokens: 0,
  }
  const rows = [
    // Priced under the bare model id after the provider's prefix
    await store.recordUsage({ ...call, model: `fake:priced-${actorRef}` }),
    await store.recordUsage({ ...call, step: 2, model: 'unpriced', known: false }),
    await store.recordUsage({ ...call, step: 3, model: 'unpriced', reportedCost: 777 }),
  ]
  await store.finishRun(runId, {
    status: 'failed',
    errorCode: 'run_failed',
    steps: 3,
    model: 'unpriced',
    retries: 2,
  })
  // A second end of the same run is not counted again
  await store.finishRun(runId, { status: 'done', steps: 3, model: 'unpriced' })
  return { runId, rows }
}

/** Every column of the tables a turn's end writes, the run's and the actor's rows only, ids and times left out */
async function ledgerState(db: Database, runId: string, actorRef: string) {
  const strip = (row: Record<string, unknown>): Record<string, unknown> => {
    const {
      id,
      created_at: createdAt,
      finished_at: finishedAt,
      duration_ms: duration,
      price_id: priceId,
      ...rest
    } = row
    return {
      ...rest,
      model: typeof rest.model === 'string' ? rest.model.replace(actorRef, 'actor') : rest.model,
      actor_ref: rest.actor_ref === undefined ? undefined : rest.actor_ref === actorRef,
      run_id: rest.run_id === undefined ? undefined : rest.run_id === runId,
      thread_id: typeof rest.thread_id,
      has: [id, createdAt, finishedAt, duration, priceId].map((value) =>
        value === null ? null : typeof value
      ),
    }
  }
  const usage = await db.from('agent_usage').where('run_id', runId).orderBy('step')
  const [run] = await db.from('agent_runs').where('id', runId)
  const rollups = await db.from('agent_rollups').where('actor_ref', actorRef).orderBy('model')
  const actorRollups = await db.from('agent_actor_rollups').where('actor_ref', actorRef)
  return {
    usage: usage.map(strip),
    run: strip(run),
    rollups: rollups.map(strip),
    actorRollups: actorRollups.map(strip),
  }
}

test.group('Agent store: prepared ledger writes on better-sqlite3', () => {
  test('usage rows, a run end and their rollups are the same with and without prepared statements', async ({
    assert,
  }) => {
    const { db } = await appDb()
    const prepared = await ledgerRows(db, new LucidAgentStore(db), 'carol')
    const lucid = await ledgerRows(
      db,
      new LucidAgentStore(db, undefined, { preparedStatements: false }),
      'dave'
    )
    assert.deepEqual(
      prepared.rows.map(({ runId, actorRef, threadId, priceId, model, ...row }) => ({
        ...row,
        model: model.replace('carol', 'x'),
      })),
      lucid.rows.map(({ runId, actorRef, threadId, priceId, model, ...row }) => ({
        ...row,
        model: model.replace('dave', 'x'),
      }))
    )
    assert.deepEqual(
      prepared.rows.map((row) => [row.costSource, row.cost > 0]),
      [
        ['estimated', true],
        ['unpriced', false],
        ['reported', true],
      ]
    )
    const written = await ledgerState(db, prepared.runId, 'carol')
    assert.deepEqual(written, await ledgerState(db, lucid.runId, 'dave'))
    assert.equal(written.run.status, 'failed')
    assert.equal(written.run.retries, 2)
    assert.lengthOf(written.usage, 3)
    assert.deepEqual(
      written.rollups.map((row: any) => [
        row.model,
        Number(row.model_calls),
        Number(row.runs_failed),
      ]),
      [
        ['fake:priced-actor', 1, 0],
        ['unpriced', 2, 0],
      ]
    )
    // The runs are alice's: each store counted its run's end once, the second end of each not at all
    const [runEnds] = await db
      .from('agent_rollups')
      .where({ actor_ref: 'alice', model: 'unpriced' })
      .select('runs_failed', 'runs_succeeded')
    assert.deepEqual([Number(runEnds.runs_failed), Number(runEnds.runs_succeeded)], [2, 0])

    // On SQLite the stored storage classes match too
    if (dialect() === 'sqlite') {
      const classes = async (runId: string) =>
        db.rawQuery(
          `select typeof(created_at) as created, typeof(usage_known) as known, typeof(cost) as cost, quote(usage_known) as flag from agent_usage where run_id = ? order by step`,
          [runId]
        )
      assert.deepEqual(await classes(prepared.runId), await classes(lucid.runId))
      const ended = async (runId: string) =>
        db.rawQuery(
          `select typeof(finished_at) as finished, typeof(duration_ms) as duration from agent_runs where id = ?`,
          [runId]
        )
      assert.deepEqual(await ended(prepared.runId), await ended(lucid.runId))
      assert.deepEqual(await ended(prepared.runId), [{ finished: 'integer', duration: 'integer' }])
    }
  })

  test('a ledger write inside a transaction is rolled back with it', async ({ assert }) => {
    const { db } = await appDb()
    const store = new LucidAgentStore(db)
    const { thread, runId } = await turnRows(store)
    await db.beginGlobalTransaction()
    try {
      await store.finishRun(runId, { status: 'done', steps: 1, model: 'm' })
      const ended = await store.findRun(runId)
      assert.equal(ended?.status, 'done')
    } finally {
      await db.rollbackGlobalTransaction()
    }
    const afterRollback = await store.findRun(runId)
    assert.equal(afterRollback?.status, 'running')
    assert.lengthOf(await db.from('agent_run_rollups').where('agent_name', 'default'), 0)
    const kept = await store.findThread(thread.id)
    assert.equal(kept?.id, thread.id)
  })
})
