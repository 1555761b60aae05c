import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { LucidAgentStore } from '../../src/agent/main.ts'
import { agentApp } from './helpers.ts'

/** The store with prepared statements (better-sqlite3) and through Lucid, on the app's database */
async function stores() {
  const app = await agentApp()
  const db: Database = await app.app.container.make('lucid.db' as any)
  return {
    'prepared statements': new LucidAgentStore(db),
    'Lucid queries': new LucidAgentStore(db, undefined, { preparedStatements: false }),
  }
}

test.group('Agent store: the rows a turn writes before its model call', () => {
  test('a new thread, its run and its question are written together, and the history is read with them', async ({
    assert,
  }) => {
    for (const [name, store] of Object.entries(await stores())) {
      const actorRef = `alice-${randomUUID()}`
      const runId = randomUUID()
      const { thread, history } = await store.startTurn({
        thread: { actorRef, title: 'Prices' },
        run: { id: runId, actorRef, agentName: 'default' },
        question: {
          content: 'What does it cost?',
          attachments: [{ id: 'f1', name: 'a.pdf', contentType: 'application/pdf', size: 3 }],
        },
      })
      assert.deepEqual(await store.findThread(thread.id), thread, name)
      assert.deepEqual(await store.listMessages(thread.id), history, name)
      assert.deepEqual(
        history.map((row) => [row.role, row.runId, row.content, row.attachments?.[0]?.id]),
        [['user', runId, 'What does it cost?', 'f1']],
        name
      )
      const run = await store.findRun(runId)
      assert.deepInclude(run, { threadId: thread.id, actorRef, status: 'running', steps: 0 }, name)

      // A second turn on the thread reads the first question before its own
      const second = randomUUID()
      const next = await store.startTurn({
        thread,
        run: { id: second, actorRef, agentName: 'default' },
        question: { content: 'And now?' },
      })
      assert.equal(next.thread.id, thread.id, name)
      assert.deepEqual(
        next.history.map((row) => [row.runId, row.content, row.attachments]),
        [
          [
            runId,
            'What does it cost?',
            [{ id: 'f1', name: 'a.pdf', contentType: 'application/pdf', size: 3 }],
          ],
          [second, 'And now?', null],
        ],
        name
      )
      // The question touched its thread
      const touched = await store.findThread(thread.id)
      assert.equal(touched!.updatedAt!.getTime(), next.history[1].createdAt!.getTime(), name)
    }
  })

  test('a refused run leaves no thread and no question behind', async ({ assert }) => {
    for (const [name, store] of Object.entries(await stores())) {
      const actorRef = `bob-${randomUUID()}`
      const runId = randomUUID()
      const { thread } = await store.startTurn({
        thread: { actorRef, title: 'First' },
        run: { id: runId, actorRef, agentName: 'default' },
        question: { content: 'one' },
      })
      // The run's id is taken: its insert fails after the thread's
      await assert.rejects(() =>
        store.startTurn({
          thread: { actorRef, title: 'Second' },
          run: { id: runId, actorRef, agentName: 'default' },
          question: { content: 'two' },
        })
      )
      const threads = (await store.listThreads(actorRef, { limit: 10 }))!
      assert.deepEqual(
        threads.map((row) => row.title),
        ['First'],
        name
      )
      // On a stored thread nothing is added either
      await assert.rejects(() =>
        store.startTurn({
          thread,
          run: { id: runId, actorRef, agentName: 'default' },
          question: { content: 'three' },
        })
      )
      const messages = await store.listMessages(thread.id)
      assert.deepEqual(
        messages.map((row) => row.content),
        ['one'],
        name
      )
    }
  })
})
