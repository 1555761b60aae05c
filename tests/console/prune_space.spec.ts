import { mkdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { getActiveTest, test } from '@japa/runner'
import { Database } from '@adonisjs/lucid/database'
import { Adapter, BaseModel } from '@adonisjs/lucid/orm'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { connectionConfig, createDatabase, dialect } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { entryId } from '../../src/console/ids.ts'
import { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import { resolvePrune } from '../../src/console/retention/config.ts'
import { pruneEntries } from '../../src/console/retention/pruner.ts'
import type { ConsoleEntry, EntryType } from '../../src/console/types.ts'

const HOUR = 3600_000
const TYPES: EntryType[] = ['request', 'query', 'log']
/** About 1 KB of content per entry, so a few thousand entries fill a few MB of pages */
const PADDING = 'x'.repeat(1000)

function entry(type: EntryType, ageMs: number, index: number): ConsoleEntry {
  // one minute holds a call's entries, so each call adds exactly one rollup row
  const createdAt = Math.floor((Date.now() - ageMs) / 60_000) * 60_000 + index
  const id = entryId(createdAt)
  const request = type === 'request'
  return {
    id,
    batchId: id,
    type,
    summary: `${type} ${index} aged ${ageMs}`,
    status: request ? 200 : null,
    method: request ? 'GET' : null,
    durationMs: request ? 3 : null,
    slow: false,
    tags: [],
    createdAt,
    content: request ? { route: '/orders/:id', padding: PADDING } : { padding: PADDING },
  }
}

/** `count` entries of each type, about `ageMs` old (each a millisecond apart) */
function entries(count: number, ageMs: number) {
  return TYPES.flatMap((type) =>
    Array.from({ length: count }, (_, index) => entry(type, ageMs, index))
  )
}

/**
 * A store on the run's database with the published tables. On SQLite the
 * database is a file of its own, created with `auto_vacuum` as given (the
 * pragma counts only before the first table), so its size can be read.
 */
async function storeOn(autoVacuum: 'incremental' | 'none') {
  const active = getActiveTest()!
  let db: Database
  let file = ''
  if (dialect() === 'sqlite') {
    const directory = join(active.context!.fs.basePath, `auto-vacuum-${autoVacuum}`)
    await mkdir(directory, { recursive: true })
    const config: any = connectionConfig('sqlite', directory)
    config.pool = {
      afterCreate: (connection: any, done: any) => {
        connection.pragma(`auto_vacuum = ${autoVacuum}`)
        done(null, connection)
      },
    }
    file = config.connection.filename
    db = new Database(
      { connection: 'sqlite', connections: { sqlite: config } },
      new LoggerFactory().create(),
      new Emitter(new AppFactory().create(active.context!.fs.baseUrl))
    )
    active.cleanup(() => db.manager.closeAll())
  } else {
    db = await createDatabase()
  }
  // as the Lucid provider does at boot: the store reads archived entries through its model
  BaseModel.$adapter = new Adapter(db)
  await migrateStubs(db, 'console')
  active.cleanup(() => dropStubTables(db, 'console'))
  const store = new LucidConsoleStore(db)
  active.cleanup(() => store.close())
  // every statement the main thread's Lucid connection sends
  const statements: string[] = []
  db.connection()
    .getWriteClient()
    .on('query', (query: { sql: string }) => statements.push(query.sql))

  const pragma = async (name: string) => {
    const rows = await db.rawQuery(`PRAGMA ${name}`)
    return Number(Object.values(rows[0])[0])
  }
  /** The file's size once its WAL is checkpointed into it */
  const fileSize = async () => {
    await db.rawQuery('PRAGMA wal_checkpoint(TRUNCATE)')
    const { size } = await stat(file)
    return size
  }
  const remaining = async () => {
    const rows = await db.from('console_entries').select('summary').orderBy('id')
    return rows.map((row: { summary: string }) => row.summary)
  }
  return { db, store, statements, pragma, fileSize, remaining }
}

const prune = (store: LucidConsoleStore, archive?: (items: ConsoleEntry[]) => void) =>
  pruneEntries(
    store,
    resolvePrune(
      { after: '1h', batchSize: 500, batchPauseMs: 0, maxBatchesPerCycle: 1000 },
      archive ? { types: ['log'], sink: async (items) => archive(items) } : undefined
    )
  )

test.group('Console prune: where deletes run, and the space they free', () => {
  test('a prune deletes exactly what is below the cutoffs; on a SQLite file the deletes run on the writer thread, elsewhere through Lucid', async ({
    assert,
  }) => {
    const { store, statements, remaining } = await storeOn('none')
    await store.write([...entries(700, 3 * HOUR), ...entries(2, 60_000)])
    const archived: string[] = []
    const result = await prune(store, (items) =>
      archived.push(...items.map((item) => item.summary))
    )

    assert.deepEqual(result, { request: 700, query: 700, log: 700, rollups: 1 })
    assert.lengthOf(archived, 700)
    const left = await remaining()
    assert.deepEqual(left.sort(), [
      'log 0 aged 60000',
      'log 1 aged 60000',
      'query 0 aged 60000',
      'query 1 aged 60000',
      'request 0 aged 60000',
      'request 1 aged 60000',
    ])
    assert.deepEqual(await store.countRows(), {
      entries: { request: 2, query: 2, log: 2 },
      rollups: 1,
    })
    const deletes = statements.filter((sql) => /^delete/i.test(sql))
    // better-sqlite3 is synchronous: on the main thread each batch would block the app
    assert.equal(store.threaded, dialect() === 'sqlite')
    if (store.threaded) assert.deepEqual(deletes, [])
    else assert.lengthOf(deletes, 2 + 2 + 2 + 1)
  })

  test('with auto_vacuum = INCREMENTAL a prune gives the pages it freed back to the SQLite file, never those the app freed', async ({
    assert,
  }) => {
    const { db, store, statements, pragma, fileSize, remaining } = await storeOn('incremental')
    await store.write([...entries(1000, 3 * HOUR), ...entries(1, 60_000)])
    if (dialect() !== 'sqlite') {
      // PostgreSQL and MariaDB reuse the space through their own vacuum and purge: nothing to give back
      assert.deepEqual(await prune(store), { request: 1000, query: 1000, log: 1000, rollups: 1 })
      assert.lengthOf(await remaining(), 3)
      assert.notMatch(statements.join('\n'), /vacuum|optimize/i)
      return
    }
    assert.equal(await pragma('auto_vacuum'), 2)
    // the app's own table, emptied: its pages are the app's to reuse or reclaim
    await db.rawQuery('CREATE TABLE app_scratch (body TEXT)')
    await db.rawQuery(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
       INSERT INTO app_scratch SELECT printf('%.4000c', 'y') FROM n`
    )
    await db.rawQuery('DELETE FROM app_scratch')
    const appFreed = await pragma('freelist_count')
    assert.isAbove(appFreed, 250)
    const seeded = await fileSize()

    assert.deepEqual(await prune(store), { request: 1000, query: 1000, log: 1000, rollups: 1 })
    assert.lengthOf(await remaining(), 3)
    // the search index's own writes may reuse a few of them; the rest stay free
    const freeAfter = await pragma('freelist_count')
    assert.isAtMost(freeAfter, appFreed)
    assert.isAbove(freeAfter, appFreed / 2)
    // 3,000 entries of about 1 KB went: the file is smaller by at least 2 MB
    assert.isBelow(await fileSize(), seeded - 2 * 1024 * 1024)
  })

  test('without incremental auto_vacuum SQLite keeps the freed pages for later entries: the file keeps its size', async ({
    assert,
  }) => {
    const { store, statements, pragma, fileSize, remaining } = await storeOn('none')
    await store.write([...entries(1000, 3 * HOUR), ...entries(1, 60_000)])
    const seeded = dialect() === 'sqlite' ? await fileSize() : 0

    assert.deepEqual(await prune(store), { request: 1000, query: 1000, log: 1000, rollups: 1 })
    assert.lengthOf(await remaining(), 3)
    // the console never runs a VACUUM of its own on the app's database
    assert.notMatch(statements.join('\n'), /vacuum|optimize/i)
    if (dialect() !== 'sqlite') return
    assert.equal(await pragma('auto_vacuum'), 0)
    assert.isAbove(await pragma('freelist_count'), 500)
    assert.equal(await fileSize(), seeded)
  })
})
