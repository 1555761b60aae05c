/**
 * CPU time of the console's SQLite flushes, per entry, on the writer thread
 * and on the app's thread: the Lucid store on a SQLite file (WAL) migrated with
 * the published stubs (search index and rollups included), fed `BENCH_FLUSH`
 * entries per flush (a second of the overhead benchmark's recording app is
 * about 3,500) from the realistic mix the other console benchmarks store,
 * `BENCH_FLUSHES` flushes after two warm-up ones. The app's thread waits
 * while the writer works, so the process's CPU time over a flush minus the
 * main thread's is the writer thread's (plus V8's helper threads, which the
 * figure includes). CPU time moves less with the machine's other load than
 * wall-clock time does; run it alternating with the build it is compared to.
 * `BENCH_WITHOUT=search,indexes` drops the search index's insert trigger
 * and/or the two secondary indexes after migrating, to see what each costs.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { dropStubTables, migrateStubs } from '../../tests/migration_stubs.ts'
import { entryId } from '../../src/console/ids.ts'
import { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'
import { benchConnection, benchDatabase, entryAt } from '../lib/console_entries.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const FLUSH = Number(process.env.BENCH_FLUSH ?? 3500)
const FLUSHES = Number(process.env.BENCH_FLUSHES ?? 20)
const WARMUP = 2

const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-writer-'))
const db = benchDatabase('sqlite', benchConnection('sqlite', directory, ''), directory)
await migrateStubs(db, 'console')
const without = (process.env.BENCH_WITHOUT ?? '').split(',')
if (without.includes('search')) await db.rawQuery('DROP TRIGGER console_entries_search_insert')
if (without.includes('indexes')) {
  await db.rawQuery('DROP INDEX console_entries_type_id_index')
  await db.rawQuery('DROP INDEX console_entries_batch_id_index')
}
const store = new LucidConsoleStore(db)
if (!store.threaded) throw new Error('the store did not start its writer thread')

let index = 0
function nextFlush() {
  const entries: ConsoleEntry[] = []
  const at = Date.now()
  let batchId = ''
  for (let count = 0; count < FLUSH; count++, index++) {
    if (index % 5 === 0) batchId = entryId(at)
    entries.push({ ...entryAt(index, at, batchId), id: entryId() })
  }
  return entries
}

const writer: number[] = []
const main: number[] = []
for (let flush = 0; flush < WARMUP + FLUSHES; flush++) {
  const entries = nextFlush()
  const all = process.cpuUsage()
  const own = process.threadCpuUsage()
  await store.write(entries)
  const allUsed = process.cpuUsage(all)
  const ownUsed = process.threadCpuUsage(own)
  if (flush < WARMUP) continue
  const mainMicros = ownUsed.user + ownUsed.system
  main.push(mainMicros / FLUSH)
  writer.push((allUsed.user + allUsed.system - mainMicros) / FLUSH)
}
const stored = await db.from('console_entries').count('* as total')
const expected = (WARMUP + FLUSHES) * FLUSH
if (Number(stored[0].total) !== expected) {
  throw new Error(`stored ${stored[0].total} entries, expected ${expected}`)
}

printTable(`Console SQLite flush: ${FLUSHES} flushes of ${FLUSH} entries, CPU time per entry`, [
  {
    'writer thread p50': figure(percentile(writer, 50), ' µs'),
    'writer thread min': figure(Math.min(...writer), ' µs'),
    'app thread p50': figure(percentile(main, 50), ' µs'),
    'per request of the overhead route (5 entries), writer p50': figure(
      percentile(writer, 50) * 5,
      ' µs'
    ),
    'entries stored': String(stored[0].total),
  },
])
await store.close()
await dropStubTables(db, 'console')
await db.manager.closeAll()
await rm(directory, { recursive: true, force: true })
