import { test } from '@japa/runner'
import type { Router } from '@adonisjs/core/http'
import { consoleApp } from './helpers.ts'
import { watchers } from '../../src/console/main.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

/** Host routes: one running three queries (two identical), one failing, one taking a body */
function hostRoutes(router: Router) {
  router.get('/users', async (ctx) => {
    const db = await ctx.containerResolver.make('lucid.db')
    await db.rawQuery('select ? as marker', ['dup'])
    await db.rawQuery('select ? as marker', ['dup'])
    await db.from('console_entries').select('id').where('type', 'none').limit(1)
    return { users: [] }
  })
  router.get('/boom', async (ctx) => {
    const db = await ctx.containerResolver.make('lucid.db')
    await db.rawQuery('select ? as marker', ['before-boom'])
    throw new Error('kaboom')
  })
  router.get('/missing', async () => {
    throw Object.assign(new Error('No such user'), { status: 404 })
  })
  router.post('/signup', async () => ({ ok: true }))
  router.get('/logged', async (ctx) => {
    ctx.logger.info({ password: 'log-secret', orderId: 7 }, 'order %s placed', 'A1')
    ctx.logger.debug('below the watcher level')
    ctx.logger.error(new Error('payment declined'), 'charge failed')
    return 'ok'
  })
}

async function recordingApp(config: ConsoleConfig = {}) {
  const app = await consoleApp({
    config: { watchers: [watchers.queries()], buffer: { flushIntervalMs: 60_000 }, ...config },
    routes: hostRoutes,
  })
  const json = async (path: string) => {
    const response = await app.api(path)
    if (response.status !== 200)
      throw new Error(`${path}: ${response.status} ${await response.text()}`)
    return (await response.json()) as any
  }
  return { ...app, json, flush: () => app.manager.recorder.flush() }
}

test.group('Console recording', () => {
  test('a request running queries is one batch holding the request and its queries', async ({
    assert,
  }) => {
    const { url, json, flush } = await recordingApp()
    assert.equal(await fetch(`${url}/users`).then((value) => value.status), 200)
    await flush()

    const { data: requests } = await json('/requests')
    assert.lengthOf(requests, 1)
    assert.deepInclude(requests[0], {
      summary: 'GET /users',
      status: 200,
      method: 'GET',
      type: 'request',
    })
    assert.notProperty(requests[0], 'content')

    const { data: batch } = await json(`/batches/${requests[0].batchId}`)
    assert.deepEqual(
      batch.entries.map((entry: any) => entry.type),
      ['request', 'query', 'query', 'query']
    )
    const queries = batch.entries.slice(1)
    assert.deepEqual(queries[0].content.bindings, ['dup'])
    assert.equal(queries[0].content.connection, process.env.DB ?? 'sqlite')
    assert.isNumber(queries[0].content.timeMs)
    assert.include(queries[2].content.sql, 'console_entries')
    assert.deepEqual(
      queries.map((query: any) => query.tags.includes('duplicate')),
      [true, true, false]
    )
    assert.equal(queries[0].content.duplicates, 2)
    assert.equal(batch.entries[0].content.route, '/users')
  })

  test('headers, query and body keys are redacted in the table and in the API', async ({
    assert,
  }) => {
    const { url, json, flush, db } = await recordingApp({ redact: { keys: ['ssn'] } })
    await fetch(`${url}/signup?page=2&api_key=query-secret-1`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'authorization': 'Bearer header-secret-2',
        'cookie': 'sid=cookie-secret-3',
        'x-trace': 'kept-header',
      },
      body: JSON.stringify({
        email: 'ada@example.com',
        password: 'body-secret-4',
        profile: { SSN: 'body-secret-5', nested: [{ token: 'body-secret-6' }] },
      }),
    })
    await flush()

    const rows = await db.connection().from('console_entries').select('content')
    const stored = rows.map((row: any) => row.content).join('\n')
    for (const secret of [
      'query-secret-1',
      'header-secret-2',
      'cookie-secret-3',
      'body-secret-4',
      'body-secret-5',
      'body-secret-6',
    ]) {
      assert.notInclude(stored, secret)
    }

    const { data: requests } = await json('/requests')
    const { data: entry } = await json(`/entries/${requests[0].id}`)
    assert.deepEqual(entry.content.query, { page: '2', api_key: '[redacted]' })
    assert.equal(entry.content.headers.authorization, '[redacted]')
    assert.equal(entry.content.headers.cookie, '[redacted]')
    assert.equal(entry.content.headers['x-trace'], 'kept-header')
    assert.deepEqual(entry.content.body, {
      email: 'ada@example.com',
      password: '[redacted]',
      profile: { SSN: '[redacted]', nested: [{ token: '[redacted]' }] },
    })
  })

  test('a body over maxBodyBytes or of a skipped content type is not recorded', async ({
    assert,
  }) => {
    const { url, json, flush } = await recordingApp({ requestCapture: { maxBodyBytes: 20 } })
    await fetch(`${url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'x'.repeat(100) }),
    })
    await fetch(`${url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: 'binary-ish',
    })
    await flush()
    const { data } = await json('/requests')
    const bodies = await Promise.all(
      data.map(
        async (summary: any) =>
          await json(`/entries/${summary.id}`).then((value) => value.data.content.body)
      )
    )
    assert.sameMembers(bodies, [
      '[skipped: application/octet-stream]',
      `[skipped: ${JSON.stringify({ note: 'x'.repeat(100) }).length} bytes over the 20 bytes cap]`,
    ])
  })

  test('an exception the handler reports joins its request batch; 4xx are skipped by default', async ({
    assert,
  }) => {
    const { url, json, flush } = await recordingApp()
    assert.equal(await fetch(`${url}/boom`).then((value) => value.status), 500)
    assert.equal(await fetch(`${url}/missing`).then((value) => value.status), 404)
    await flush()

    const { data: exceptions } = await json('/exceptions')
    assert.lengthOf(exceptions, 1)
    assert.equal(exceptions[0].summary, 'Error: kaboom')
    const { data: batch } = await json(`/batches/${exceptions[0].batchId}`)
    assert.deepEqual(
      batch.entries.map((entry: any) => [entry.type, entry.summary]),
      [
        ['request', 'GET /boom'],
        ['query', batch.entries[1].summary],
        ['exception', 'Error: kaboom'],
      ]
    )
    assert.include(batch.entries[2].content.stack, 'kaboom')
    const { data: requests } = await json('/requests')
    assert.sameMembers(
      requests.map((r: any) => r.status),
      [500, 404]
    )
  })

  test('captureHttp4xx records 4xx exceptions too', async ({ assert }) => {
    const { url, json, flush } = await recordingApp({ exceptions: { captureHttp4xx: true } })
    await fetch(`${url}/missing`)
    await flush()
    const { data } = await json('/exceptions')
    assert.deepEqual(
      data.map((e: any) => [e.summary, e.status]),
      [['Error: No such user', 404]]
    )
  })

  test('sampling drops whole batches but always keeps a batch with an exception or a 5xx', async ({
    assert,
  }) => {
    const { url, json, flush } = await recordingApp({ sampling: { request: 0 } })
    await fetch(`${url}/users`)
    await fetch(`${url}/boom`)
    await fetch(`${url}/users`)
    await flush()
    const { data: requests } = await json('/requests')
    assert.deepEqual(
      requests.map((r: any) => r.summary),
      ['GET /boom']
    )
    const { data: queries } = await json('/queries')
    assert.deepEqual(
      queries.map((q: any) => q.batchId),
      [requests[0].batchId]
    )
  })

  test('sampling always keeps a slow request', async ({ assert }) => {
    const { url, json, flush } = await recordingApp({ sampling: { request: 0 }, slowRequestMs: 0 })
    await fetch(`${url}/users`)
    await flush()
    const { data } = await json('/requests?slow=true')
    assert.lengthOf(data, 1)
    assert.deepEqual(data[0].tags, ['slow'])
  })

  test("the console's own API requests and their queries are never recorded", async ({
    assert,
  }) => {
    const { url, json, flush, api } = await recordingApp()
    await fetch(`${url}/users`)
    await flush()
    for (let i = 0; i < 3; i++) await api('/requests')
    await flush()
    await json('/queries')
    await flush()
    const { data: requests } = await json('/requests')
    assert.deepEqual(
      requests.map((r: any) => r.summary),
      ['GET /users']
    )
    const { data: queries } = await json('/queries')
    assert.lengthOf(queries, 3)
  })

  test('a full buffer drops and counts whole batches instead of growing', async ({ assert }) => {
    const { url, manager, flush, json } = await recordingApp({
      buffer: { maxEntries: 5, flushAt: 100, flushIntervalMs: 60_000 },
    })
    await fetch(`${url}/users`)
    await fetch(`${url}/users`)
    // the second request's batch (its request and three queries) does not fit: dropped whole
    assert.equal(manager.recorder.pending, 4)
    assert.equal(manager.recorder.dropped, 4)
    await flush()
    assert.equal(manager.recorder.written, 4)
    assert.lengthOf(await json('/queries').then((value) => value.data), 3)
    assert.lengthOf(await json('/requests').then((value) => value.data), 1)
  })

  test('a batch keeps at most maxEntriesPerBatch entries and its request says how many were dropped', async ({
    assert,
  }) => {
    const { url, json, flush } = await recordingApp({
      buffer: { maxEntriesPerBatch: 2, flushIntervalMs: 60_000 },
    })
    await fetch(`${url}/users`)
    await flush()
    const { data: requests } = await json('/requests')
    const { data: batch } = await json(`/batches/${requests[0].batchId}`)
    assert.deepEqual(
      batch.entries.map((e: any) => e.type),
      ['request', 'query', 'query']
    )
    assert.equal(batch.entries[0].content.droppedEntries, 1)
  })

  test('a buffer past flushAt is written before the timer fires', async ({ assert }) => {
    const { url, manager, json } = await recordingApp({
      buffer: { maxEntries: 8, flushIntervalMs: 3_600_000 },
    })
    await fetch(`${url}/users`)
    while (manager.recorder.written < 4) await new Promise((resolve) => setTimeout(resolve, 10))
    await fetch(`${url}/users`)
    while (manager.recorder.written < 8) await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(manager.recorder.dropped, 0)
    assert.lengthOf(await json('/requests').then((value) => value.data), 2)
  })

  test('resolveUser names the user on the request entry and skipBody keeps a body out', async ({
    assert,
  }) => {
    const { url, json, flush } = await recordingApp({
      resolveUser: (ctx) => ({ id: String(ctx.request.header('x-user') ?? 'anonymous') }),
      requestCapture: { skipBody: (ctx) => ctx.request.url() === '/signup' },
    })
    await fetch(`${url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'u7' },
      body: JSON.stringify({ email: 'grace@example.com' }),
    })
    await flush()
    const { data } = await json('/requests')
    const { data: entry } = await json(`/entries/${data[0].id}`)
    assert.deepEqual(entry.content.user, { id: 'u7' })
    assert.equal(entry.content.body, '[skipped]')
  })

  test('shutdown writes what is still buffered', async ({ assert }) => {
    const { url, db, close, manager } = await recordingApp({
      buffer: { flushIntervalMs: 3_600_000 },
    })
    await fetch(`${url}/users`)
    assert.equal(manager.recorder.pending, 4)
    await close()
    const rows = await db.connection().from('console_entries').count('* as total')
    assert.equal(Number(rows[0].total), 4)
  })

  test('log lines join their request batch, redacted, at or above the watcher level', async ({
    assert,
  }) => {
    const { url, json, flush, app } = await recordingApp({
      watchers: [watchers.queries(), watchers.logs({ level: 'info' })],
    })
    await fetch(`${url}/logged`)
    const logger = await app.container.make('logger')
    logger.warn('outside any request')
    await flush()

    const { data: requests } = await json('/requests')
    const { data: batch } = await json(`/batches/${requests[0].batchId}`)
    const logs = batch.entries.filter((entry: any) => entry.type === 'log')
    assert.deepEqual(
      logs.map((entry: any) => [entry.content.level, entry.content.message, entry.content.context]),
      [
        ['info', 'order A1 placed', { password: '[redacted]', orderId: 7 }],
        ['error', 'charge failed', { err: { name: 'Error', message: 'payment declined' } }],
      ]
    )
    const { data: all } = await json('/logs')
    assert.sameMembers(
      all.map((entry: any) => entry.summary),
      ['info: order A1 placed', 'error: charge failed', 'warn: outside any request']
    )
    const { data: errors } = await json('/logs?tag=error')
    assert.lengthOf(errors, 1)
  })

  test('the flush timer writes without being asked', async ({ assert }) => {
    const { url, manager, json } = await recordingApp({ buffer: { flushIntervalMs: 20 } })
    await fetch(`${url}/users`)
    while (manager.recorder.written < 4) await new Promise((resolve) => setTimeout(resolve, 10))
    const { data } = await json('/requests')
    assert.lengthOf(data, 1)
  })

  test('lists filter by status, method, tag and slow, and page by keyset without overlap', async ({
    assert,
  }) => {
    const { url, json, flush, api } = await recordingApp()
    for (let i = 0; i < 3; i++) await fetch(`${url}/users`)
    await fetch(`${url}/boom`)
    await fetch(`${url}/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    await flush()

    assert.deepEqual(
      await json('/requests?status=5xx').then((value) => value.data.map((r: any) => r.summary)),
      ['GET /boom']
    )
    assert.deepEqual(
      await json('/requests?status=200&method=post').then((value) =>
        value.data.map((r: any) => r.summary)
      ),
      ['POST /signup']
    )
    assert.lengthOf(await json('/queries?tag=duplicate').then((value) => value.data), 6)
    assert.lengthOf(await json('/requests?slow=true').then((value) => value.data), 0)

    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: any = await json(`/requests?limit=2${cursor ? `&before=${cursor}` : ''}`)
      seen.push(...page.data.map((r: any) => r.id))
      cursor = page.nextCursor
    } while (cursor)
    assert.lengthOf(seen, 5)
    assert.lengthOf(new Set(seen), 5)
    assert.deepEqual(seen, [...seen].sort().reverse())

    for (const [query, parameter] of [
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['before=zzz', 'before'],
      ['status=6xx', 'status'],
      ['method=G%20T', 'method'],
      ['tag=%25', 'tag'],
      ['slow=maybe', 'slow'],
      ['limit=1&limit=2', 'limit'],
    ]) {
      const response = await api(`/requests?${query}`)
      assert.equal(response.status, 400, query)
      assert.equal(
        await response.json().then((value: any) => value.errors[0].parameter),
        parameter,
        query
      )
    }
    assert.equal(await api('/entries/not-an-id').then((value) => value.status), 400)
    assert.equal(await api('/entries/000000000000000000000000').then((value) => value.status), 404)
    assert.equal(await api('/batches/000000000000000000000000').then((value) => value.status), 404)
  })
})
