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
import { type Dialect } from '../../tests/helpers.ts'
import { migrateStubs, dropStubTables } from '../../tests/migration_stubs.ts'
import { runLoad, type LoadResult } from '../lib/http_app.ts'
import { bootOverheadApp, seedBenchItems, workPlan } from '../lib/console_overhead_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const dialects = (process.env.BENCH_DB ?? 'sqlite').split(',') as Dialect[]
/** `buffer.flushAt` of the recording app (the default when unset) */
const FLUSH_AT = process.env.BENCH_FLUSH_AT ? Number(process.env.BENCH_FLUSH_AT) : undefined
/** `sampling.request` of the recording app (keep all when unset) */
const REQUEST_SAMPLING = process.env.BENCH_SAMPLING ? Number(process.env.BENCH_SAMPLING) : undefined

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
  const apps = {
    off: await bootOverheadApp(which, directory, false),
    on: await bootOverheadApp(which, directory, true, {
      flushAt: FLUSH_AT,
      requestSampling: REQUEST_SAMPLING,
    }),
  }
  const db = await apps.on.app.container.make('lucid.db')
  await migrateStubs(db, 'console')
  await seedBenchItems(db)

  const plan = (url: string) => workPlan(url, REQUESTS, CONCURRENCY)
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
  `Console recording overhead: POST /work (3 queries + 1 log line), ${ROUNDS} x ${REQUESTS} requests per side, concurrency ${CONCURRENCY}${REQUEST_SAMPLING === undefined ? '' : `, sampling.request ${REQUEST_SAMPLING}`}`,
  rows
)
