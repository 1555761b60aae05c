import { randomUUID } from 'node:crypto'
import diagnosticsChannel from 'node:diagnostics_channel'
import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { LucidAgentStore, stores as agentStores } from '../../src/agent/main.ts'
import type { ThreadRow, TurnStart } from '../../src/agent/store/contract.ts'
import { agentApp, bodyOf, deltasOf } from './helpers.ts'

/** The store with prepared statements (better-sqlite3; one statement on PostgreSQL) and through Lucid */
async function stores() {
  const app = await agentApp()
  const db: Database = await app.app.container.make('lucid.db' as any)
  return {
    'prepared statements': new LucidAgentStore(db),
    'Lucid queries': new LucidAgentStore(db, undefined, { preparedStatements: false }),
  }
}

/** A thread as the gateway makes one before storing it */
function newThread(actorRef: string, title: string): ThreadRow {
  const now = new Date()
  return { id: randomUUID(), actorRef, title, defaultAgent: null, createdAt: now, updatedAt: now }
}

function turn(thread: ThreadRow, newOne: boolean, runId: string, content: string): TurnStart {
  return {
    thread,
    newThread: newOne,
    run: { id: runId, actorRef: thread.actorRef, agentName: 'default' },
    question: { content },
  }
}

test.group('Agent store: the rows a turn writes when it starts', () => {
  test('a new thread, its run and its question are written together; a later turn adds its own', async ({
    assert,
  }) => {
    for (const [name, store] of Object.entries(await stores())) {
      const thread = newThread(`alice-${randomUUID()}`, 'Prices')
      const runId = randomUUID()
      await store.startTurn({
        ...turn(thread, true, runId, 'What does it cost?'),
        question: {
          content: 'What does it cost?',
          attachments: [{ id: 'f1', name: 'a.pdf', contentType: 'application/pdf', size: 3 }],
        },
      })
      const found = await store.findThread(thread.id)
      assert.deepInclude(found, { id: thread.id, actorRef: thread.actorRef, title: 'Prices' }, name)
      const [question] = await store.listMessages(thread.id)
      assert.deepInclude(
        question,
        {
          role: 'user',
          runId,
          content: 'What does it cost?',
          attachments: [{ id: 'f1', name: 'a.pdf', contentType: 'application/pdf', size: 3 }],
        },
        name
      )
      // The thread's updatedAt is its question's time, as a touched thread's is
      assert.equal(found!.updatedAt!.getTime(), question.createdAt!.getTime(), name)
      const run = await store.findRun(runId)
      assert.deepInclude(run, { threadId: thread.id, status: 'running', steps: 0 }, name)

      const second = randomUUID()
      await store.startTurn(turn(found!, false, second, 'And now?'))
      const messages = await store.listMessages(thread.id)
      assert.deepEqual(
        messages.map((row) => [row.runId, row.content]),
        [
          [runId, 'What does it cost?'],
          [second, 'And now?'],
        ],
        name
      )
      const touched = await store.findThread(thread.id)
      assert.equal(touched!.updatedAt!.getTime(), messages[1].createdAt!.getTime(), name)
    }
  })

  test('a refused run leaves no thread and no question behind', async ({ assert }) => {
    for (const [name, store] of Object.entries(await stores())) {
      const actorRef = `bob-${randomUUID()}`
      const runId = randomUUID()
      const first = newThread(actorRef, 'First')
      await store.startTurn(turn(first, true, runId, 'one'))
      // The run's id is taken: its insert fails after the thread's
      await assert.rejects(() =>
        store.startTurn(turn(newThread(actorRef, 'Second'), true, runId, 'two'))
      )
      const threads = (await store.listThreads(actorRef, { limit: 10 }))!
      assert.deepEqual(
        threads.map((row) => row.title),
        ['First'],
        name
      )
      // On a stored thread nothing is added either
      await assert.rejects(() => store.startTurn(turn(first, false, runId, 'three')))
      const messages = await store.listMessages(first.id)
      assert.deepEqual(
        messages.map((row) => row.content),
        ['one'],
        name
      )
    }
  })
})

test.group('Agent chat: the model call does not wait for the turn to be stored', () => {
  test('the model is asked before the turn is stored; the stream starts with meta and the answer is stored after its run', async ({
    assert,
  }) => {
    let modelAskedFirst: boolean | undefined
    const app = await agentApp({
      config: {
        store: async (container) => {
          const store: any = await agentStores.lucid()(container)
          const write = store.startTurn.bind(store)
          store.startTurn = async (input: TurnStart) => {
            // Holds the write until the model has the request (2 s at most, never forever)
            for (let waited = 0; waited < 200 && !app.fake.requests.length; waited++) {
              await new Promise((resolve) => setTimeout(resolve, 10))
            }
            modelAskedFirst = app.fake.requests.length > 0
            await write(input)
          }
          return store
        },
      },
    })
    app.fake.reply({ text: ['Hello', ' there'] })
    const { response, sse } = await app.chat({ message: 'hi' })
    assert.equal(response.status, 200)
    const frames = await sse.rest()
    assert.isTrue(modelAskedFirst)
    assert.equal(frames[0].event, 'meta')
    assert.deepEqual(deltasOf(frames), ['Hello', ' there'])
    assert.equal(frames.at(-1)!.event, 'done')

    const runId = response.headers.get('x-agent-run-id')!
    const threadId = response.headers.get('x-agent-thread-id')!
    assert.equal(frames[0].data.threadId, threadId)
    const thread = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.deepEqual(
      thread.messages.map((message: any) => [message.role, message.content]),
      [
        ['user', 'hi'],
        ['assistant', 'Hello there'],
      ]
    )
    assert.equal((await app.manager.config.store.findRun(runId))!.status, 'done')
  })

  test('a turn whose rows cannot be stored fails the chat, stores nothing, stops its model call and never announces its run', async ({
    assert,
  }) => {
    const started: unknown[] = []
    let runId = ''
    const listener = (message: unknown) => started.push(message)
    diagnosticsChannel.subscribe('atrium:agent:run.started', listener)
    const app = await agentApp({
      config: {
        quotaLimitTokens: 100_000,
        quotaReserveTokens: 500,
        store: async (container) => {
          const store: any = await agentStores.lucid()(container)
          store.startTurn = async (input: TurnStart) => {
            runId = input.run.id
            throw new Error('the disk is full')
          }
          return store
        },
      },
    })
    try {
      // A reply that waits before its first token: the failed write stops it
      app.fake.reply({ text: ['never', ' stored'], stallAfter: 0 })
      const response = await app.request('POST', '/chat', undefined, { message: 'hi' })
      assert.equal(response.status, 500)
      await response.text()
      assert.lengthOf(await app.db.from('agent_threads'), 0)
      assert.lengthOf(await app.db.from('agent_runs'), 0)
      assert.lengthOf(await app.db.from('agent_messages'), 0)
      assert.lengthOf(started, 0)
      // The reply stalls until released: the run ends only because its call was aborted
      await app.manager.settled(runId)
      // and its hold was charged as a cancelled call's is (the provider may have started)
      assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), {
        usedTokens: 500,
      })
      assert.lengthOf(await app.db.from('agent_quota_holds'), 0)
    } finally {
      diagnosticsChannel.unsubscribe('atrium:agent:run.started', listener)
    }
  })
})
