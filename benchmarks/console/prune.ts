/**
 * Pruning `BENCH_ENTRIES` (1,000,000) old console entries on each dialect of
 * `BENCH_DB` (SQLite by default; `sqlite,pg` for both). The tables come from
 * the published migration stubs (the search index included), and the entries
 * are written through the store's own flush path: a realistic mix of types,
 * summaries and content, with time-ordered ids spread over a day that ended
 * two days ago, plus `RECENT` entries of the last hour that must survive.
 *
 * The prune is the scheduler's, with the default batchSize (1000) and
 * batchPauseMs (50) and enough batches per cycle to delete everything old,
 * while `monitorEventLoopDelay` watches the main thread (and, as the
 * baseline, watches it idle for five seconds first: the delay the machine's
 * other load adds; each figure includes the 10 ms resolution). Targets: no
 * event-loop block over 50 ms during the prune, and on SQLite a database file
 * (plus its -wal) smaller after the prune than before it. The SQLite file is
 * created with `auto_vacuum = INCREMENTAL` as docs/console.md advises
 * (`BENCH_SQLITE_AUTO_VACUUM=none` measures a file without it); on PostgreSQL
 * the table's size (`pg_total_relation_size`) is printed for information.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Database } from '@adonisjs/lucid/database'
import type { Dialect } from '../../tests/helpers.ts'
import { dropStubTables, migrateStubs } from '../../tests/migration_stubs.ts'
import { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import { resolvePrune } from '../../src/console/retention/config.ts'
import { PruneScheduler } from '../../src/console/retention/schedule.ts'
import { benchConnection, benchDatabase, seedEntries as seed } from '../lib/console_entries.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 1_000_000)
const dialects = (process.env.BENCH_DB ?? 'sqlite').split(',') as Dialect[]
const AUTO_VACUUM = process.env.BENCH_SQLITE_AUTO_VACUUM ?? 'incremental'
/** Entries of the last hour: the prune must leave exactly these */
const RECENT = 1000
const TARGET_MAX_BLOCK_MS = 50
const DAY = 86_400_000
/** How long the loop is watched idle, before the prune, as the baseline */
const IDLE_BASELINE_MS = 5000

/** The SQLite file and its -wal, or the console tables' size on PostgreSQL (and no wal) */
async function storageBytes(which: Dialect, db: Database, file: string) {
  if (which === 'pg') {
    const result = await db.rawQuery(
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint as bytes from pg_class c
       where c.relname in ('console_entries', 'console_rollups') and c.relnamespace = current_schema()::regnamespace`
    )
    return { main: Number(result.rows[0].bytes), wal: 0 }
  }
  const size = async (path: string) => {
    const found = await stat(path).catch(() => undefined)
    return found?.size ?? 0
  }
  return { main: await size(file), wal: await size(`${file}-wal`) }
}

/**
 * The store the scheduler prunes through, recording the main thread's CPU
 * time over each delete batch: nothing else runs on this thread during the
 * prune, so it bounds the longest block a batch can cause whatever the
 * machine's other load does to wall-clock figures.
 */
function cpuTimedStore(store: LucidConsoleStore, cpuPerBatch: number[]) {
  const timed = new Set(['deleteBelow', 'deleteRollupsBefore'])
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key)
      if (typeof value !== 'function') return value
      if (!timed.has(String(key))) return value.bind(target)
      return async (...args: unknown[]) => {
        const start = process.threadCpuUsage()
        try {
          return await value.apply(target, args)
        } finally {
          const used = process.threadCpuUsage(start)
          cpuPerBatch.push((used.user + used.system) / 1000)
        }
      }
    },
  })
}

const mb = (bytes: number) => figure(bytes / 1024 / 1024, ' MB')
const sized = (which: Dialect, size: { main: number; wal: number }) =>
  which === 'pg' ? mb(size.main) : `${mb(size.main + size.wal)} (wal ${mb(size.wal)})`
const total = (size: { main: number; wal: number }) => size.main + size.wal
const ms = (nanoseconds: number) => figure(nanoseconds / 1e6, ' ms')
const loopRows: Record<string, string>[] = []
const sizeRows: Record<string, string>[] = []

for (const which of dialects) {
  if (which !== 'sqlite' && which !== 'pg') throw new Error(`BENCH_DB: unsupported "${which}"`)
  const directory = await mkdtemp(join(tmpdir(), 'atrium-console-prune-'))
  const schema = `bench_console_prune_${process.pid}`
  const config = benchConnection(which, directory, schema, AUTO_VACUUM)
  const file = join(directory, 'db.sqlite3')
  const db = benchDatabase(which, config, directory)
  let store: LucidConsoleStore | undefined
  try {
    if (which === 'pg') await db.rawQuery(`create schema "${schema}"`)
    await migrateStubs(db, 'console')
    store = new LucidConsoleStore(db)
    const sizeBefore = await storageBytes(which, db, file)

    const now = Date.now()
    const seedStart = performance.now()
    await seed(store, ENTRIES, now - 3 * DAY, DAY)
    await seed(store, RECENT, now - 3600_000, 3600_000)
    // fresh statistics, as autovacuum (PostgreSQL) or `pragma optimize` (SQLite) would keep
    await db.rawQuery(which === 'pg' ? 'vacuum analyze console_entries' : 'analyze')
    const seedSeconds = (performance.now() - seedStart) / 1000
    const sizeSeeded = await storageBytes(which, db, file)

    const options = resolvePrune({
      after: '1d',
      maxBatchesPerCycle: Math.ceil(ENTRIES / 1000) + 10,
      intervalMs: false,
    })
    const cpuPerBatch: number[] = []
    const scheduler = new PruneScheduler(cpuTimedStore(store, cpuPerBatch), options)
    globalThis.gc?.()
    // the baseline: the same monitor over an idle loop, i.e. what the machine's other load adds
    const idle = monitorEventLoopDelay({ resolution: 10 })
    idle.enable()
    await sleep(IDLE_BASELINE_MS)
    idle.disable()
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const pruneStart = performance.now()
    let deleted = 0
    let rollups = 0
    for (let cycle = 0; ; cycle++) {
      const result = await scheduler.prune()
      const { rollups: rollupRows = 0, ...entries } = result
      const count = Object.values(entries).reduce((sum, value) => sum + (value ?? 0), 0)
      deleted += count
      rollups += rollupRows
      if (count === 0 || cycle > 10) break
    }
    const pruneSeconds = (performance.now() - pruneStart) / 1000
    delay.disable()
    await scheduler.stop()
    const sizeAfter = await storageBytes(which, db, file)

    const stored = await store.countRows()
    const left = Object.values(stored.entries).reduce((sum, value) => sum + (value ?? 0), 0)
    if (deleted !== ENTRIES || left !== RECENT) {
      throw new Error(
        `the prune deleted ${deleted} of ${ENTRIES} old entries, ${left} entries left`
      )
    }
    const label = which === 'sqlite' ? `sqlite (auto_vacuum ${AUTO_VACUUM})` : 'pg'
    loopRows.push({
      'db': label,
      'deleted': deleted.toLocaleString('en-US'),
      'rollup rows': rollups.toLocaleString('en-US'),
      'prune wall': figure(pruneSeconds, ' s'),
      'rows/s': figure(deleted / pruneSeconds),
      'loop p50 / p99 / max': `${ms(delay.percentile(50))} / ${ms(delay.percentile(99))} / ${ms(delay.max)}`,
      'idle loop p99 / max': `${ms(idle.percentile(99))} / ${ms(idle.max)}`,
      'max ≤ 50 ms': delay.max / 1e6 <= TARGET_MAX_BLOCK_MS ? 'yes' : 'NO',
      'main CPU/batch p50 / max': `${figure(percentile(cpuPerBatch, 50), ' ms')} / ${figure(Math.max(...cpuPerBatch), ' ms')}`,
      'main CPU total': figure(cpuPerBatch.reduce((sum, value) => sum + value, 0) / 1000, ' s'),
    })
    sizeRows.push({
      'db': label,
      'seeding': figure(seedSeconds, ' s'),
      'size of': which === 'pg' ? 'console tables' : 'file + wal',
      'empty': sized(which, sizeBefore),
      'seeded': sized(which, sizeSeeded),
      'pruned': sized(which, sizeAfter),
      'smaller after': `${total(sizeAfter) < total(sizeSeeded) ? 'yes' : 'NO'}${which === 'pg' ? ' (no target)' : ''}`,
    })
  } finally {
    await store?.close()
    if (which === 'pg') await db.rawQuery(`drop schema "${schema}" cascade`).catch(() => {})
    else await dropStubTables(db, 'console').catch(() => {})
    await db.manager.closeAll()
    await rm(directory, { recursive: true, force: true })
  }
}

const title = `Console prune of ${ENTRIES.toLocaleString('en-US')} entries older than a day (+${RECENT} recent kept), batchSize 1000, batchPauseMs 50`
printTable(
  `${title}: event-loop delay (target: max ≤ ${TARGET_MAX_BLOCK_MS} ms; figures include the 10 ms resolution; idle = the same monitor for 5 s before the prune, the machine's own noise)`,
  loopRows
)
printTable(
  'Storage before seeding, after seeding and after the prune (target on SQLite: smaller after; PostgreSQL for information)',
  sizeRows
)
