import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import { exceptionEntry, logEntry, requestEntry } from './entry_factories.ts'
import { stores } from '../../src/console/main.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'
import { runStub } from '../migration_stubs.ts'
import { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import type { Database } from '@adonisjs/lucid/database'
import { dialect } from '../helpers.ts'

/**
 * On MariaDB, waits until the FULLTEXT index finds each word (as a prefix, as
 * the store searches) in `count` summaries. InnoDB's full-text cache can lag
 * the commit: a MATCH run at once from another connection after the write's
 * commit, on a loaded machine, now and then finds none of a
 * word's rows (measured: 4 rounds of 850 under load; the same query a moment
 * later finds them all). Other databases index inside the transaction.
 */
async function fullTextCaughtUp(db: Database, counts: Record<string, number>) {
  if (dialect() !== 'mysql') return
  const deadline = Date.now() + 10_000
  for (const [word, count] of Object.entries(counts)) {
    for (;;) {
      const [row] = await db
        .from('console_entries')
        .whereRaw('MATCH (summary) AGAINST (? IN BOOLEAN MODE)', [`+${word}*`])
        .count('* as total')
      if (Number(row.total) === count) break
      if (Date.now() > deadline) throw new Error(`"${word}": ${row.total} of ${count} indexed`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
}

/** Summaries each store must find by their words */
async function searchApp(config: ConsoleConfig = {}) {
  const app = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 }, ...config } })
  const now = Date.now()
  await app.manager.store.write([
    requestEntry(now - 5000, '/users/:id', 12),
    requestEntry(now - 4000, '/invoices/:id/pdf', 40, 500, 'POST'),
    exceptionEntry(now - 3000, 'PaymentDeclinedException: Card ending 4242 was declined'),
    exceptionEntry(now - 2000, 'TypeError: Cannot read properties of undefined (reading "user")'),
    logEntry(now - 1000, 'info: invoice 77 sent to ção@example.com 🚀 日本語'),
  ])
  if (app.manager.store instanceof LucidConsoleStore) {
    await fullTextCaughtUp(app.db, { users: 1, invoice: 2, declined: 1, typeerror: 1 })
  }
  const search = async (query: string) => {
    const response = await app.api(`/search?${query}`)
    return { status: response.status, body: (await response.json()) as any }
  }
  const summaries = async (query: string) => {
    const { status, body } = await search(query)
    if (status !== 200) throw new Error(`${query}: ${status} ${JSON.stringify(body)}`)
    return body.data.map((entry: any) => entry.summary)
  }
  return { ...app, search, summaries }
}

/** Hostile searches: quotes, operators of each engine, wildcards, escapes, unicode */
const HOSTILE = [
  '"',
  '""',
  "'",
  "' OR 1=1 --",
  'declined"',
  '"declined',
  'NEAR(declined card)',
  'declined AND',
  'OR NOT AND',
  '-declined +card',
  '*',
  'declin*',
  '^card',
  'summary:declined',
  '(card',
  'card)',
  '@@ card',
  '!card & ~x | <y>',
  '\\',
  '%_%',
  'card\u0000declined',
  '💥',
  '\u202Ecard',
  'e\u0301',
].map((q) => encodeURIComponent(q))

/** Query strings no client library would send: broken UTF-8 and percent escapes */
const MALFORMED = ['%ED%A0%80', '%FF%FE', '%', '%zz', 'card%00', '%E2%80%AE']

test.group('Console search', () => {
  for (const storage of ['database', 'memory'] as const) {
    test(`GET /search finds every word of q in the summaries, newest first (${storage} store)`, async ({
      assert,
    }) => {
      const { summaries } = await searchApp(
        storage === 'memory' ? { storage: stores.memory() } : {}
      )
      assert.deepEqual(await summaries('q=declined'), [
        'PaymentDeclinedException: Card ending 4242 was declined',
      ])
      assert.deepEqual(await summaries('q=CARD%20declined'), [
        'PaymentDeclinedException: Card ending 4242 was declined',
      ])
      // punctuation separates words: "/users/:id" is found by "users"
      assert.deepEqual(await summaries('q=users'), ['GET /users/:id'])
      assert.deepEqual(await summaries('q=invoices%20pdf'), ['POST /invoices/:id/pdf'])
      assert.deepEqual(await summaries('q=invoice%2077'), [
        'info: invoice 77 sent to ção@example.com 🚀 日本語',
      ])
      assert.deepEqual(await summaries(`q=${encodeURIComponent('ção')}`), [
        'info: invoice 77 sent to ção@example.com 🚀 日本語',
      ])
      // short words and MariaDB's stopwords are matched too
      assert.deepEqual(await summaries('q=sent%20to'), [
        'info: invoice 77 sent to ção@example.com 🚀 日本語',
      ])
      assert.deepEqual(await summaries('q=77'), [
        'info: invoice 77 sent to ção@example.com 🚀 日本語',
      ])
      assert.deepEqual(await summaries('q=declined%20nowhere'), [])
      assert.deepEqual(await summaries('q=undefined&type=exception'), [
        'TypeError: Cannot read properties of undefined (reading "user")',
      ])
      assert.deepEqual(await summaries('q=undefined&type=log'), [])
    })

    test(`q on a list route searches that type only (${storage} store)`, async ({ assert }) => {
      const app = await searchApp(storage === 'memory' ? { storage: stores.memory() } : {})
      const response = await app.api('/requests?q=pdf')
      const body = (await response.json()) as any
      assert.equal(response.status, 200)
      assert.deepEqual(
        body.data.map((entry: any) => entry.summary),
        ['POST /invoices/:id/pdf']
      )
      const none = await app.api('/exceptions?q=pdf')
      assert.deepEqual(((await none.json()) as any).data, [])
    })

    test(`search pages by keyset like the lists (${storage} store)`, async ({ assert }) => {
      const app = await consoleApp({
        config: {
          buffer: { flushIntervalMs: 60_000 },
          storage: storage === 'memory' ? stores.memory() : undefined,
        },
      })
      const now = Date.now()
      await app.manager.store.write(
        Array.from({ length: 7 }, (_, index) =>
          logEntry(now - 7000 + index, `info: batch job ${index}`)
        )
      )
      await app.manager.store.write([logEntry(now, 'info: something else')])
      const seen: string[] = []
      let cursor: string | null = null
      for (let page = 0; page < 5; page++) {
        const query: string = `q=job&limit=3${cursor ? `&before=${cursor}` : ''}`
        const response = await app.api(`/search?${query}`)
        const body = (await response.json()) as any
        seen.push(...body.data.map((entry: any) => entry.summary))
        cursor = body.nextCursor
        if (!cursor) break
      }
      assert.deepEqual(
        seen,
        Array.from({ length: 7 }, (_, index) => `info: batch job ${6 - index}`)
      )
    })

    test(`hostile q never fails the search (${storage} store)`, async ({ assert }) => {
      const { search } = await searchApp(storage === 'memory' ? { storage: stores.memory() } : {})
      for (const q of [...HOSTILE, ...MALFORMED]) {
        const { status, body } = await search(`q=${q}`)
        assert.oneOf(status, [200, 400], `${JSON.stringify(q)}: ${JSON.stringify(body)}`)
        if (status === 400) {
          assert.deepEqual(body.errors[0].parameter, 'q', JSON.stringify(q))
        } else {
          assert.isArray(body.data, JSON.stringify(q))
        }
      }
      // operators are plain separators: these still find the declined card
      for (const q of ['"declined', 'declined*', '-declined +card', '(card', 'card:declined']) {
        const { body } = await search(`q=${encodeURIComponent(q)}`)
        assert.lengthOf(body.data, 1, q)
      }
    })
  }

  test('a search finds matches older than the newest 2,000 entries, and pages through both', async ({
    assert,
  }) => {
    const app = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const now = Date.now()
    // Three old matches, 2,100 newer entries without the word, then two recent matches:
    // the newest 2,000 entries hold less than a page, so the search must look further back
    await app.manager.store.write([
      ...[0, 1, 2].map((index) => logEntry(now - 100_000 + index, `info: rare marker ${index}`)),
      ...Array.from({ length: 2100 }, (_, index) =>
        logEntry(now - 90_000 + index, `info: routine line ${index}`)
      ),
      logEntry(now - 2, 'info: rare marker 3'),
      logEntry(now - 1, 'info: rare marker 4'),
    ])
    await fullTextCaughtUp(app.db, { rare: 5, routine: 2100 })
    const pages: string[][] = []
    let cursor: string | null = null
    for (let page = 0; page < 5; page++) {
      const response = await app.api(`/search?q=rare&limit=2${cursor ? `&before=${cursor}` : ''}`)
      const body = (await response.json()) as any
      pages.push(body.data.map((entry: any) => entry.summary))
      cursor = body.nextCursor
      if (!cursor) break
    }
    assert.deepEqual(pages, [
      ['info: rare marker 4', 'info: rare marker 3'],
      ['info: rare marker 2', 'info: rare marker 1'],
      ['info: rare marker 0'],
    ])
    // A word in every recent entry: the page comes from the newest entries, newest first
    const routineResponse = await app.api('/search?q=routine&limit=3')
    const routine = (await routineResponse.json()) as any
    assert.deepEqual(
      routine.data.map((entry: any) => entry.summary),
      ['info: routine line 2099', 'info: routine line 2098', 'info: routine line 2097']
    )
  })

  test('q is required, capped at 200 characters, and needs a letter or a digit', async ({
    assert,
  }) => {
    const { search } = await searchApp()
    const cases: Array<[string, string, string]> = [
      ['', 'q', '"q" is required'],
      ['q=', 'q', '"q" is required'],
      [`q=${'a'.repeat(201)}`, 'q', '"q" must be at most 200 characters'],
      ['q=***', 'q', '"q" must contain a letter or a digit'],
      ['q=a&q=b', 'q', '"q" must be given once'],
      ['q[x]=a', 'q', '"q" must be given once'],
      [
        'q=card&type=nope',
        'type',
        '"type" must be one of request, query, exception, log, http, feature, cache, redis, mail, job, schedule, event, client_error, cpu_profile',
      ],
      ['q=card&limit=0', 'limit', '"limit" must be a whole number from 1 to 200'],
      ['q=card&before=zz', 'before', '"before" must be an entry id from nextCursor'],
    ]
    for (const [query, parameter, message] of cases) {
      const { status, body } = await search(query)
      assert.equal(status, 400, query)
      assert.deepEqual(
        body.errors[0],
        { code: 'E_CONSOLE_INVALID_QUERY', message, parameter },
        query
      )
    }
    const { status } = await search(`q=${'a'.repeat(200)}`)
    assert.equal(status, 200)
  })

  test('search without the search migration is a 503 naming it', async ({ assert }) => {
    const app = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    await runStub(app.db, 'console_entries_search', 'down')
    const response = await app.api('/search?q=card')
    assert.equal(response.status, 503)
    const body = (await response.json()) as any
    assert.equal(body.errors[0].code, 'E_CONSOLE_SEARCH_UNAVAILABLE')
    assert.include(body.errors[0].message, 'console_entries_search migration')
  })

  test('the search migration indexes the entries recorded before it ran', async ({ assert }) => {
    const app = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    await runStub(app.db, 'console_entries_search', 'down')
    await app.manager.store.write([logEntry(Date.now(), 'info: recorded before the migration')])
    await runStub(app.db, 'console_entries_search', 'up')
    await app.manager.store.write([logEntry(Date.now(), 'info: recorded after the migration')])
    const response = await app.api('/search?q=migration%20recorded')
    const body = (await response.json()) as any
    assert.deepEqual(
      body.data.map((entry: any) => entry.summary),
      ['info: recorded after the migration', 'info: recorded before the migration']
    )
    // pruning removes entries from the index too
    await app.db.connection().from('console_entries').where('summary', 'like', '%before%').delete()
    const after = await app.api('/search?q=migration')
    assert.deepEqual(
      ((await after.json()) as any).data.map((entry: any) => entry.summary),
      ['info: recorded after the migration']
    )
  })
})
