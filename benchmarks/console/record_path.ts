/**
 * Main-thread cost of recording one request, without HTTP or a database: the
 * overhead benchmark's route (three Lucid queries and a log line) replayed
 * through the request, query and log watchers on real Adonis request objects,
 * committed, and flushed every `buffer.flushAt` entries through the part of a
 * SQLite flush that runs on the main thread (the rollups and the JSON
 * serialisation; the insert runs on the writer thread). Rounds alternate
 * recording on and `enabled: false`; the difference per request is what
 * recording adds, including the garbage collection its entries cause. Far
 * less noisy than the HTTP benchmark on a shared machine: one thread, no
 * sockets.
 */
import { EventEmitter, once } from 'node:events'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import { PerformanceObserver } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { HttpContextFactory, RequestFactory } from '@adonisjs/core/factories/http'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import { ConsoleRecorder } from '../../src/console/recorder.ts'
import { rollupsOf } from '../../src/console/rollups/route_minute.ts'
import { flatChunks } from '../../src/console/stores/bulk_insert.ts'
import { MemoryConsoleStore } from '../../src/console/stores/memory.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'
import { LogWatcher } from '../../src/console/watchers/log_watcher.ts'
import { QueryWatcher } from '../../src/console/watchers/query_watcher.ts'
import { RequestWatcher } from '../../src/console/watchers/request_watcher.ts'
import { figure, printTable } from '../lib/report.ts'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

/**
 * Stands in for the SQLite writer thread (sqlite_writer_worker.ts) minus the
 * insert: it receives each flush's chunks and turns rows into JSON there
 */
const writerThread = new Worker(
  `const { parentPort } = require('node:worker_threads')
  parentPort.on('message', (chunks) => {
    let length = 0
    for (const chunk of chunks) length += (typeof chunk === 'string' ? chunk : JSON.stringify(chunk)).length
    parentPort.postMessage(length)
  })`,
  { eval: true }
)

/**
 * The main thread's share of a SQLite flush: the rollups, the rows, and
 * handing them to the writer thread; `serialiseHere` is the previous way,
 * a `JSON.stringify` per chunk on this thread before the hand-over
 */
class WriterThreadStore extends MemoryConsoleStore {
  serialised = 0
  constructor(readonly serialiseHere: boolean) {
    super()
  }
  async write(entries: ConsoleEntry[]) {
    rollupsOf(entries)
    const rows = flatChunks(entries)
    writerThread.postMessage(this.serialiseHere ? rows.map((chunk) => JSON.stringify(chunk)) : rows)
    const [length] = await once(writerThread, 'message')
    this.serialised += length
  }
}

function setup(enabled: boolean, serialiseHere = false) {
  const config = resolveConsoleConfig({ enabled, overloadProtection: false })
  const store = new WriterThreadStore(serialiseHere)
  const recorder = new ConsoleRecorder(config, store)
  const knex = new EventEmitter()
  const db: any = {
    manager: {
      connections: new Map([['sqlite', {}]]),
      get: () => ({ connection: { client: knex, readClient: knex } }),
      connect() {},
    },
  }
  const queries = new QueryWatcher(config, recorder, {})
  queries.install(db)
  const logs = new LogWatcher(config, recorder, { level: 'info' })
  const requests = new RequestWatcher(config, recorder)
  let uid = 0
  const query = (sql: string, bindings: unknown[]) => {
    const started = { sql, bindings, __knexQueryUid: `q${uid++}` }
    knex.emit('query', started)
    knex.emit('query-response', [], started)
  }
  // what the overhead benchmark's route does, synchronously
  const route = async () => {
    query('select * from `bench_items` where `id` = ? limit ?', [7, 1])
    query('select count(*) as `total` from `bench_items`', [])
    query('select `id`, `name` from `bench_items` order by `id` desc limit ?', [10])
    if (enabled) logs.record('info', ['work done', undefined])
  }
  // one context serves every request: building Adonis' request objects costs more than
  // recording them, and the watchers read (and copy) the same things from a fresh one
  const req = new IncomingMessage(new Socket())
  req.method = 'POST'
  req.url = '/work'
  // the load generator's headers
  req.headers = {
    'host': '127.0.0.1:40123',
    'content-type': 'application/json',
    'content-length': '2',
    'connection': 'keep-alive',
  }
  const request = new RequestFactory().merge({ req, res: new ServerResponse(req) }).create()
  request.updateBody({})
  request.updateRawBody('{}')
  const ctx = new HttpContextFactory()
    .merge({ request, route: { pattern: '/work', params: {} } })
    .create()
  return {
    recorder,
    store,
    async serve() {
      await requests.handle(ctx, route)
      // the recorder's timer never fires inside this loop: flush at `flushAt` as a burst would
      if (recorder.pending >= config.buffer.flushAt) await recorder.flush()
    },
  }
}

let gcMs = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration
}).observe({ entryTypes: ['gc'] })

const sides = {
  'off': setup(false),
  'on, JSON on the main thread': setup(true, true),
  'on': setup(true),
}
type Side = keyof typeof sides
const totals = Object.fromEntries(
  Object.keys(sides).map((side) => [side, { cpu: 0, gc: 0 }])
) as Record<Side, { cpu: number; gc: number }>
for (let round = -1; round < ROUNDS; round++) {
  for (const side of Object.keys(sides) as Side[]) {
    const cpu = process.threadCpuUsage()
    const gcBefore = gcMs
    for (let index = 0; index < REQUESTS; index++) await sides[side].serve()
    await sides[side].recorder.flush()
    const used = process.threadCpuUsage(cpu)
    await new Promise((resolve) => setImmediate(resolve))
    // the first round warms the JIT up and is not counted
    if (round < 0) continue
    totals[side].cpu += used.user + used.system
    totals[side].gc += (gcMs - gcBefore) * 1000
  }
}
await writerThread.terminate()
const perRequest = (micros: number) => micros / (REQUESTS * ROUNDS)
const off = perRequest(totals.off.cpu)
printTable(
  `Console recording, main-thread CPU per request without HTTP (3 queries + 1 log line, flushed every ${resolveConsoleConfig({}).buffer.flushAt} entries), ${ROUNDS} x ${REQUESTS} requests per side, alternating`,
  (Object.keys(sides) as Side[]).map((side) => ({
    'recording': side,
    'cpu/req': figure(perRequest(totals[side].cpu), ' µs'),
    'added by recording': side === 'off' ? '' : figure(perRequest(totals[side].cpu) - off, ' µs'),
    'gc/req': figure(perRequest(totals[side].gc), ' µs'),
    'KB serialised per request': figure(
      sides[side].store.serialised / 1024 / (REQUESTS * (ROUNDS + 1))
    ),
  }))
)
