/**
 * Cost of recording: one route running three Lucid queries and a log line,
 * served by two apps in the same run, one with the console recording
 * (request and exception watchers, the query and log watchers, the Lucid
 * store) and
 * one with `enabled: false`. Rounds alternate off/on so drift hits both; a
 * child process generates the load over keep-alive sockets on loopback.
 *
 * Besides throughput and latency it prints the server's CPU time per request
 * (the main thread, and the whole process including the console's SQLite
 * writer thread), measured around each round; the recording side's round
 * includes the flush of what it recorded. On a shared machine CPU time per
 * request moves less with other load than throughput does.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PerformanceObserver } from 'node:perf_hooks'
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { migrateStubs, dropStubTables } from '../../tests/migration_stubs.ts'
import { defineConfig, watchers } from '../../src/console/main.ts'
import { bootHttpApp, runLoad, type LoadResult } from '../lib/http_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const dialects = (process.env.BENCH_DB ?? 'sqlite').split(',') as Dialect[]
/** `buffer.flushAt` of the recording app (the default when unset) */
const FLUSH_AT = process.env.BENCH_FLUSH_AT ? Number(process.env.BENCH_FLUSH_AT) : undefined

async function boot(which: Dialect, directory: string, recording: boolean) {
  const connection: any = connectionConfig(which, directory)
  if (which === 'sqlite') {
    connection.pool = {
      afterCreate: (raw: any, done: any) => {
        raw.pragma('journal_mode = WAL')
        done(null, raw)
      },
    }
  }
  return bootHttpApp({
    appRoot: new URL(`file://${directory}/`),
    providers: [
      () => import('@adonisjs/lucid/database_provider'),
      () => import('../../providers/console_provider.ts'),
    ],
    config: {
      database: { connection: which, connections: { [which]: connection } },
      console: defineConfig({
        enabled: recording,
        watchers: [watchers.queries(), watchers.logs()],
        // measure the cost of recording, not of pausing it under the load
        overloadProtection: false,
        ...(FLUSH_AT ? { buffer: { flushAt: FLUSH_AT } } : {}),
      }),
      logger: {
        default: 'app',
        loggers: { app: { enabled: true, level: 'info', destination: '/dev/null' } },
      },
    },
    routes(router) {
      router.post('/work', async (ctx) => {
        const db = await ctx.containerResolver.make('lucid.db')
        const one = await db.from('bench_items').where('id', 7).first()
        const count = await db.from('bench_items').count('* as total')
        const page = await db
          .from('bench_items')
          .select('id', 'name')
          .orderBy('id', 'desc')
          .limit(10)
        ctx.logger.info('work done')
        return { one: one?.id, total: count[0].total, page: page.length }
      })
    },
  })
}

function summary(result: LoadResult) {
  return {
    rps: result.latencies.length / (result.elapsed / 1000),
    p50: percentile(result.latencies, 50),
    p99: percentile(result.latencies, 99),
  }
}

/** Main-thread garbage collection time (ms) since the start, from the `gc` performance entries */
let gcMs = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration
}).observe({ entryTypes: ['gc'] })

const rows: Record<string, string>[] = []
for (const which of dialects) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-console-'))
  const totals = { off: [] as LoadResult[], on: [] as LoadResult[] }
  const cpu = { off: { main: 0, all: 0, gc: 0 }, on: { main: 0, all: 0, gc: 0 } }
  const apps = { off: await boot(which, directory, false), on: await boot(which, directory, true) }
  const db = await apps.on.app.container.make('lucid.db')
  await migrateStubs(db, 'console')
  await db.connection().schema.dropTableIfExists('bench_items')
  await db.connection().schema.createTable('bench_items', (table) => {
    table.increments('id')
    table.string('name')
  })
  await db
    .table('bench_items')
    .multiInsert(Array.from({ length: 100 }, (_, i) => ({ name: `item ${i}` })))

  const plan = (url: string) => ({
    url: `${url}/work`,
    concurrency: CONCURRENCY,
    requests: REQUESTS,
    bodies: 'same',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  })
  await runLoad({ ...plan(apps.off.url), requests: 200 })
  await runLoad({ ...plan(apps.on.url), requests: 200 })
  const manager = await apps.on.app.container.make('atrium.console')
  await manager.recorder.flush()
  const measured = async (side: 'off' | 'on', url: string) => {
    const main = process.threadCpuUsage()
    const all = process.cpuUsage()
    const gcBefore = gcMs
    totals[side].push(await runLoad(plan(url)))
    if (side === 'on') await manager.recorder.flush()
    const mainUsed = process.threadCpuUsage(main)
    const allUsed = process.cpuUsage(all)
    cpu[side].main += mainUsed.user + mainUsed.system
    cpu[side].all += allUsed.user + allUsed.system
    // gc entries arrive after the pause they describe: let them in before reading the sum
    await new Promise((resolve) => setImmediate(resolve))
    cpu[side].gc += (gcMs - gcBefore) * 1000
  }
  for (let round = 0; round < ROUNDS; round++) {
    await measured('off', apps.off.url)
    await measured('on', apps.on.url)
  }
  const stored = await db.from('console_entries').count('* as total')

  const merge = (results: LoadResult[]) =>
    results.reduce(
      (all, r) => ({
        elapsed: all.elapsed + r.elapsed,
        latencies: [...all.latencies, ...r.latencies],
        statuses: {},
      }),
      { elapsed: 0, latencies: [] as number[], statuses: {} }
    )
  const off = summary(merge(totals.off))
  const on = summary(merge(totals.on))
  const perRequest = (micros: number) => figure(micros / (REQUESTS * ROUNDS), ' µs')
  rows.push({
    'db': which,
    'req/s off': figure(off.rps),
    'req/s on': figure(on.rps),
    'on/off': figure(on.rps / off.rps, 'x'),
    'p50 off': figure(off.p50, ' ms'),
    'p50 on': figure(on.p50, ' ms'),
    'p99 off': figure(off.p99, ' ms'),
    'p99 on': figure(on.p99, ' ms'),
    'cpu/req off': perRequest(cpu.off.main),
    'cpu/req on': perRequest(cpu.on.main),
    'cpu/req on, all threads': perRequest(cpu.on.all),
    'gc/req off': perRequest(cpu.off.gc),
    'gc/req on': perRequest(cpu.on.gc),
    'entries written': String(stored[0].total),
    'dropped': String(manager.recorder.dropped),
  })
  await dropStubTables(db, 'console')
  await db.connection().schema.dropTableIfExists('bench_items')
  await apps.on.close()
  await apps.off.close()
  await rm(directory, { recursive: true, force: true })
}

printTable(
  `Console recording overhead: POST /work (3 queries + 1 log line), ${ROUNDS} x ${REQUESTS} requests per side, concurrency ${CONCURRENCY}`,
  rows
)
