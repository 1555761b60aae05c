/**
 * The console's read API over `BENCH_ENTRIES` (1,000,000) stored entries on
 * each dialect of `BENCH_DB` (SQLite by default; `sqlite,pg` for both): the
 * tables come from the published migration stubs, the entries (and their
 * per-minute rollups) are written through the store's flush path, spread
 * over the last day, then a real Adonis app with the console provider serves
 * `{path}/api` on loopback and each endpoint is timed through HTTP, one
 * request at a time after warm-ups: lists (first page, a page half way down,
 * filters), search, an entry, a batch and the health view. Target: p99 ≤ 50 ms.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { performance } from 'node:perf_hooks'
import type { Dialect } from '../../tests/helpers.ts'
import { dropStubTables, migrateStubs } from '../../tests/migration_stubs.ts'
import { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import { benchConnection, benchDatabase, seedEntries } from '../lib/console_entries.ts'
import { bootHttpApp } from '../lib/http_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const WARMUP = 20
const TARGET_P99_MS = 50
const DAY = 86_400_000
const dialects = (process.env.BENCH_DB ?? 'sqlite').split(',') as Dialect[]

/** Milliseconds of each of `RUNS` sequential GETs of `url`, after warm-ups; the last body */
async function time(url: string) {
  let body: any
  const get = async () => {
    const response = await fetch(url)
    body = await response.json()
    if (!response.ok) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`)
  }
  for (let index = 0; index < WARMUP; index++) await get()
  const values: number[] = []
  for (let index = 0; index < RUNS; index++) {
    const start = performance.now()
    await get()
    values.push(performance.now() - start)
  }
  return { values, body }
}

const rows: Record<string, string>[] = []

for (const which of dialects) {
  if (which !== 'sqlite' && which !== 'pg') throw new Error(`BENCH_DB: unsupported "${which}"`)
  const directory = await mkdtemp(join(tmpdir(), 'atrium-console-reads-'))
  const schema = `bench_console_reads_${process.pid}`
  const connection = benchConnection(which, directory, schema)
  const db = benchDatabase(which, connection, directory)
  let server: Awaited<ReturnType<typeof bootHttpApp>> | undefined
  try {
    if (which === 'pg') await db.rawQuery(`create schema "${schema}"`)
    await migrateStubs(db, 'console')
    const store = new LucidConsoleStore(db)
    const seedStart = performance.now()
    await seedEntries(store, ENTRIES, Date.now() - DAY, DAY - 60_000)
    await store.close()
    // fresh statistics, as autovacuum (PostgreSQL) or `pragma optimize` (SQLite) would keep
    await db.rawQuery(which === 'pg' ? 'vacuum analyze' : 'analyze')
    const seedSeconds = (performance.now() - seedStart) / 1000

    // Ids to read: a request half way down its list, and one entry and its batch
    const requests = await db.from('console_entries').where('type', 'request').count('* as total')
    const [middle] = await db
      .from('console_entries')
      .where('type', 'request')
      .orderBy('id', 'desc')
      .offset(Math.floor(Number(requests[0].total) / 2))
      .limit(1)
      .select('id', 'batch_id')
    await db.manager.closeAll()

    server = await bootHttpApp({
      appRoot: pathToFileURL(`${directory}/`),
      providers: [
        () => import('@adonisjs/lucid/database_provider'),
        () => import('../../providers/console_provider.ts'),
      ],
      config: {
        database: { connection: which, connections: { [which]: connection } },
        console: defineConfig({
          storage: stores.database(),
          authorizer: () => true,
          watchers: [],
          overloadProtection: false,
        }),
        logger: {
          default: 'app',
          loggers: { app: { enabled: true, level: 'warn', destination: '/dev/null' } },
        },
      },
    })
    const api = `${server.url}/console/api`
    const endpoints: [string, string][] = [
      ['requests, first page', '/requests'],
      ['requests, half way down (before=)', `/requests?before=${middle.id}`],
      ['requests, status=5xx', '/requests?status=5xx'],
      ['requests, method=DELETE', '/requests?method=DELETE'],
      ['requests, slow=true', '/requests?slow=true'],
      ['requests, tag=5xx', '/requests?tag=5xx'],
      ['queries, first page', '/queries'],
      ['exceptions, first page', '/exceptions'],
      ['search "paid" (every type)', '/search?q=paid'],
      // one request of the mix has this page name: the newest entries hold no page of it
      ['search "item 971" (one match, every type)', '/search?q=item%20971'],
      ['search "found products", type=exception', '/search?q=found%20products&type=exception'],
      ['entry', `/entries/${middle.id}`],
      ['batch', `/batches/${middle.batch_id}`],
      ['health (last 60 minutes)', '/health'],
      ['health (last 1,440 minutes)', '/health?minutes=1440'],
    ]
    for (const [name, path] of endpoints) {
      const { values, body } = await time(`${api}${path}`)
      const p99 = percentile(values, 99)
      rows.push({
        'db': which,
        'endpoint': name,
        'p50': figure(percentile(values, 50), ' ms'),
        'p99': figure(p99, ' ms'),
        'p99 ≤ 50 ms': p99 <= TARGET_P99_MS ? 'yes' : 'NO',
        'rows': Array.isArray(body?.data) ? String(body.data.length) : '-',
        'seeded in': figure(seedSeconds, ' s'),
      })
    }
  } finally {
    await server?.close()
    const cleanup = benchDatabase(which, connection, directory)
    if (which === 'pg') await cleanup.rawQuery(`drop schema "${schema}" cascade`).catch(() => {})
    else await dropStubTables(cleanup, 'console').catch(() => {})
    await cleanup.manager.closeAll()
    await rm(directory, { recursive: true, force: true })
  }
}

printTable(
  `Console read API over ${ENTRIES.toLocaleString('en-US')} stored entries (the last day), ${RUNS} sequential requests each after ${WARMUP} warm-ups, through HTTP on loopback (target: p99 ≤ ${TARGET_P99_MS} ms)`,
  rows
)
