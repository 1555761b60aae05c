/**
 * The store's part of a chat turn on a new thread (create and find the
 * thread, insert the run and the question, read the history) on SQLite in
 * WAL mode: better-sqlite3 prepared statements (the store's default there)
 * beside the same calls through knex (`preparedStatements: false`), and the
 * same rows through `startTurn` (the gateway's path: one transaction, and
 * no read, since a new thread's history is its question), interleaved in one
 * process so a noisy moment colours them alike.
 */
import { pathToFileURL } from 'node:url'
import { randomUUID } from 'node:crypto'
import { Database } from '@adonisjs/lucid/database'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { LucidAgentStore } from '../../src/agent/main.ts'
import { agentDatabase } from '../lib/agent_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const RUNS = Number(process.env.BENCH_RUNS ?? 2000)
const database = await agentDatabase()
const db = new Database(
  database.database as any,
  new LoggerFactory().create(),
  new Emitter(new AppFactory().create(pathToFileURL(`${database.directory}/`)))
)
const stores = {
  prepared: new LucidAgentStore(db),
  lucid: new LucidAgentStore(db, undefined, { preparedStatements: false }),
}
async function turn(store: LucidAgentStore) {
  const start = performance.now()
  const thread = await store.createThread({ actorRef: 'alice', title: 'hello' })
  const found = await store.findThread(thread.id)
  const runId = randomUUID()
  await store.createRun({ id: runId, threadId: found!.id, actorRef: 'alice', agentName: 'default' })
  await store.appendMessage({ threadId: thread.id, runId, role: 'user', content: 'hello there' })
  await store.listMessages(thread.id)
  return performance.now() - start
}
/** The same rows as the gateway writes them for a new thread: one transaction, no read */
async function startTurn(store: LucidAgentStore) {
  const start = performance.now()
  const now = new Date()
  await store.startTurn({
    thread: {
      id: randomUUID(),
      actorRef: 'alice',
      title: 'hello',
      defaultAgent: null,
      createdAt: now,
      updatedAt: now,
    },
    newThread: true,
    run: { id: randomUUID(), actorRef: 'alice', agentName: 'default' },
    question: { content: 'hello there' },
  })
  return performance.now() - start
}
const WARMUP = 200
const times: Record<string, number[]> = { startTurn: [], prepared: [], lucid: [] }
for (let i = 0; i < WARMUP; i++) {
  await startTurn(stores.prepared)
  await turn(stores.prepared)
  await turn(stores.lucid)
}
for (let i = 0; i < RUNS; i++) {
  times.startTurn.push(await startTurn(stores.prepared))
  times.prepared.push(await turn(stores.prepared))
  times.lucid.push(await turn(stores.lucid))
}
const row = (path: string, values: number[]) => ({
  path,
  p50: figure(percentile(values, 50), ' ms'),
  p99: figure(percentile(values, 99), ' ms'),
})
printTable(`The store's part of a turn on a new thread, ${RUNS} turns each (SQLite, WAL)`, [
  row('startTurn: one transaction, prepared statements, no read', times.startTurn),
  row('separate calls, prepared statements', times.prepared),
  row('knex (preparedStatements: false)', times.lucid),
  {
    path: 'ratio separate / startTurn',
    p50: figure(percentile(times.prepared, 50) / percentile(times.startTurn, 50), 'x'),
    p99: figure(percentile(times.prepared, 99) / percentile(times.startTurn, 99), 'x'),
  },
  {
    path: 'ratio knex / prepared',
    p50: figure(percentile(times.lucid, 50) / percentile(times.prepared, 50), 'x'),
    p99: figure(percentile(times.lucid, 99) / percentile(times.prepared, 99), 'x'),
  },
])
await db.manager.closeAll()
await database.remove()
