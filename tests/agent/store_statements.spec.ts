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
