import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import { connectionConfig, dialect, TMP_ROOT } from '../helpers.ts'
import { stores, watchers } from '../../src/console/main.ts'
import { entryId } from '../../src/console/ids.ts'
import { createRequire } from 'node:module'
import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  INSERT_CHUNK,
  flatChunks,
  SQLITE_INSERT,
  SQLITE_INSERT_VALUES,
} from '../../src/console/stores/bulk_insert.ts'
import { SqliteWriter } from '../../src/console/stores/sqlite_writer.ts'
import type { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'

/** Content every database must give back exactly: quotes, escapes, unicode, nesting, numbers */
const AWKWARD = {
  text: 'quote " backslash \\ newline \n tab \t ção 🚀 </script>',
  nested: { list: [1, 2.5, -3e-7, null, true, false, 'x'], empty: {}, none: [] },
  big: Number.MAX_SAFE_INTEGER,
}

function entry(index: number, overrides: Partial<ConsoleEntry> = {}): ConsoleEntry {
  const id = entryId()
  return {
    id,
    batchId: id,
    type: 'log',
    summary: `line ${index} "quoted" ção`,
    status: null,
    method: null,
    durationMs: null,
    slow: false,
    tags: ['info'],
    createdAt: Date.now(),
    content: { index, ...AWKWARD },
    ...overrides,
  }
}

test.group('Console storage', () => {
  test('a flush writes every column and gives back the content exactly', async ({ assert }) => {
    const { manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const written = [
      entry(1),
      entry(2, {
        type: 'request',
        status: 503,
        method: 'POST',
        durationMs: 12.345,
        slow: true,
        tags: ['slow', 'x:y.z-1'],
      }),
    ]
    await manager.store.write(written)
    for (const expected of written) {
      assert.deepEqual(await manager.store.find(expected.id), expected)
    }
    const page = await manager.store.list({
      type: 'request',
      limit: 10,
      slow: true,
      tag: 'x:y.z-1',
    })
    assert.deepEqual(
      page.data.map((summary) => summary.id),
      [written[1].id]
    )
  })

  test('a flush larger than one insert statement is written whole', async ({ assert }) => {
    const { manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const many = Array.from({ length: INSERT_CHUNK * 2 + 7 }, (_, index) => entry(index))
    await manager.store.write(many)
    const last = await manager.store.find(many[many.length - 1].id)
    assert.equal(last?.content.index, many.length - 1)
    const rows = await manager.store.list({ type: 'log', limit: 200 })
    assert.lengthOf(rows.data, 200)
    assert.isNotNull(rows.nextCursor)
  })

  test('on a SQLite file, flushes run on the writer thread; writerThread: false keeps them on the main thread', async ({
    assert,
  }) => {
    const threaded = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const store = threaded.manager.store as LucidConsoleStore
    assert.equal(store.threaded, dialect() === 'sqlite')

    const inline = await consoleApp({
      config: {
        storage: stores.database({ writerThread: false }),
        buffer: { flushIntervalMs: 60_000 },
      },
    })
    const inlineStore = inline.manager.store as LucidConsoleStore
    assert.isFalse(inlineStore.threaded)
    const one = entry(1)
    await inlineStore.write([one])
    assert.deepEqual(await inlineStore.find(one.id), one)
  })

  test('content a worker thread cannot receive (a function) is still written, as JSON keeps it', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const odd = entry(1, { content: { kept: 'yes', nested: { callback: () => 'never stored' } } })
    const plain = entry(2)
    await manager.store.write([odd, plain])
    const stored = await manager.store.find(odd.id)
    assert.deepEqual(stored?.content, { kept: 'yes', nested: {} })
    assert.deepEqual(await manager.store.find(plain.id), plain)
  })

  test('when SQLite refuses to prepare the multi-row insert, the writer thread unpacks the rows from JSON instead', async ({
    assert,
    cleanup,
  }) => {
    // a SQLite file of its own: the writer thread exists for SQLite files whatever DB runs the suite
    const directory = await mkdtemp(join(TMP_ROOT, 'writer-'))
    cleanup(async () => {
      await rm(directory, { recursive: true, force: true })
    })
    const filename = join(directory, 'console.sqlite3')
    const Database = createRequire(import.meta.url)('better-sqlite3')
    const file = new Database(filename)
    file.exec(`CREATE TABLE console_entries (id varchar(24) PRIMARY KEY, batch_id varchar(24) NOT NULL,
      type varchar(16) NOT NULL, summary varchar(255) NOT NULL, status integer, method varchar(10),
      duration_ms float, slow boolean NOT NULL, tags varchar(255) NOT NULL, created_at bigint NOT NULL,
      content text NOT NULL)`)
    const writer = SqliteWriter.forConnection('better-sqlite3', { filename })!
    cleanup(async () => {
      await writer.close()
      file.close()
    })
    const written = [
      entry(1),
      entry(2, { type: 'request', status: 201, method: 'GET', slow: true }),
    ]
    // a table that does not exist stands in for a build whose variable limit refuses the statement
    const refused = SQLITE_INSERT_VALUES.replace('console_entries', 'console_entries_elsewhere')
    await writer.write({ values: refused, unpack: SQLITE_INSERT }, flatChunks(written))
    await writer.write(
      { values: SQLITE_INSERT_VALUES, unpack: SQLITE_INSERT },
      flatChunks([entry(3)])
    )

    const rows = file.prepare('SELECT * FROM console_entries ORDER BY id').all()
    assert.deepEqual(
      rows.map((row: any) => [
        row.type,
        row.status,
        row.method,
        row.slow,
        JSON.parse(row.content).index,
      ]),
      [
        ['log', null, null, 0, 1],
        ['request', 201, 'GET', 1, 2],
        ['log', null, null, 0, 3],
      ]
    )
    assert.deepEqual(JSON.parse(rows[0].content), written[0].content)
  })

  test('a write the database refuses rejects, on the writer thread too', async ({ assert }) => {
    const { manager, db } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    await db.connection().schema.dropTable('console_entries')
    await assert.rejects(() => manager.store.write([entry(1)]))
  })

  test('queries on a connection Lucid opens after boot are recorded in their request batch', async ({
    assert,
  }) => {
    const { url, manager, app } = await consoleApp({
      config: { watchers: [watchers.queries()], buffer: { flushIntervalMs: 60_000 } },
      routes(router) {
        router.get('/second', async (ctx) => {
          const lucid = await ctx.containerResolver.make('lucid.db')
          await lucid.connection('late').rawQuery('select ? as late_marker', ['late'])
          return 'ok'
        })
      },
    })
    const db = await app.container.make('lucid.db')
    db.manager.add('late', connectionConfig())
    const response = await fetch(`${url}/second`)
    assert.equal(response.status, 200)
    await manager.recorder.flush()
    const { data: requests } = await manager.store.list({ type: 'request', limit: 5 })
    const batch = await manager.store.batch(requests[0].batchId)
    const queries = batch.filter((item) => item.type === 'query')
    assert.lengthOf(queries, 1)
    assert.include(String(queries[0].content.sql), 'late_marker')
    assert.equal(queries[0].content.connection, 'late')
    assert.deepEqual(queries[0].content.bindings, ['late'])
    await db.manager.close('late')
  })

  test('log lines of another app in the same process are not recorded', async ({ assert }) => {
    const recording = await consoleApp({
      config: { watchers: [watchers.logs()], buffer: { flushIntervalMs: 60_000 } },
    })
    const other = await consoleApp({ config: { enabled: false } })
    const otherLogger = await other.app.container.make('logger')
    otherLogger.info('from the other app')
    otherLogger.child({ request_id: 'r1' }).warn('from the other app, child')
    const logger = await recording.app.container.make('logger')
    logger.child({ request_id: 'r2' }).info('from the recording app')
    await recording.manager.recorder.flush()
    const { data } = await recording.manager.store.list({ type: 'log', limit: 50 })
    assert.deepEqual(
      data.map((line) => line.summary).filter((summary) => summary.includes('app')),
      ['info: from the recording app']
    )
  })
})
