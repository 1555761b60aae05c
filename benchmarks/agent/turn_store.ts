/**
 * The store's part of a chat turn before the model call (create and find the
 * thread, insert the run and the question, read the history) on SQLite in
 * WAL mode: better-sqlite3 prepared statements (the store's default there)
 * beside the same calls through knex (`preparedStatements: false`),
 * interleaved in one process so a noisy moment colours both alike.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { randomUUID } from 'node:crypto'
import { Database } from '@adonisjs/lucid/database'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { connectionConfig } from '../../tests/helpers.ts'
import { migrateStubs } from '../../tests/migration_stubs.ts'
import { LucidAgentStore } from '../../src/agent/main.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const RUNS = Number(process.env.BENCH_RUNS ?? 2000)
const directory = await mkdtemp(join(tmpdir(), 'atrium-turn-store-'))
const sqlite: any = connectionConfig('sqlite', directory)
sqlite.pool = {
  afterCreate: (connection: any, done: any) => {
    connection.pragma('journal_mode = WAL')
    connection.pragma('synchronous = NORMAL')
    done(null, connection)
  },
}
const db = new Database(
  { connection: 'sqlite', connections: { sqlite } } as any,
  new LoggerFactory().create(),
  new Emitter(new AppFactory().create(pathToFileURL(`${directory}/`)))
)
await migrateStubs(db, 'agent')
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
await rm(directory, { recursive: true, force: true })
