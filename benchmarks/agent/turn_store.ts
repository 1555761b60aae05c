/**
 * The store's part of a chat turn before the model call (create and find the
 * thread, insert the run and the question, read the history) on SQLite in
 * WAL mode: better-sqlite3 prepared statements (the store's default there)
 * beside the same calls through knex (`preparedStatements: false`),
 * interleaved in one process so a noisy moment colours both alike.
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
const WARMUP = 200
const times: Record<string, number[]> = { prepared: [], lucid: [] }
for (let i = 0; i < WARMUP; i++) {
  await turn(stores.prepared)
  await turn(stores.lucid)
}
for (let i = 0; i < RUNS; i++) {
  times.prepared.push(await turn(stores.prepared))
  times.lucid.push(await turn(stores.lucid))
}
const row = (path: string, values: number[]) => ({
  path,
  p50: figure(percentile(values, 50), ' ms'),
  p99: figure(percentile(values, 99), ' ms'),
})
printTable(`The store's part of a turn before the model call, ${RUNS} turns each (SQLite, WAL)`, [
  row('prepared statements', times.prepared),
  row('knex (preparedStatements: false)', times.lucid),
  {
    path: 'ratio knex / prepared',
    p50: figure(percentile(times.lucid, 50) / percentile(times.prepared, 50), 'x'),
    p99: figure(percentile(times.lucid, 99) / percentile(times.prepared, 99), 'x'),
  },
])
await db.manager.closeAll()
await database.remove()
