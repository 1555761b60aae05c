import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import { stores } from '../../src/console/main.ts'
import { decode, quantile, total } from '../../src/console/rollups/histogram.ts'
import { minuteOf, UNMATCHED_ROUTE } from '../../src/console/rollups/route_minute.ts'
import { requestEntry } from './entry_factories.ts'

const MINUTE = 60_000

/** One minute's requests: durations 1..count ms, every tenth a 503 */
function minuteOfRequests(at: number, route: string, count: number, offset = 0) {
  return Array.from({ length: count }, (_, index) =>
    requestEntry(at, route, offset + index + 1, (index + 1) % 10 === 0 ? 503 : 200)
  )
}

test.group('Console rollups', () => {
  test('requests served by the app are summed per minute and route pattern in the flush', async ({
    assert,
  }) => {
    const { url, manager } = await consoleApp({
      config: { buffer: { flushIntervalMs: 60_000 } },
      routes(router) {
        router.get('/users/:id', async () => ({ ok: true }))
        router.get('/broken', async ({ response }) => response.status(503).send('down'))
      },
    })
    const status = async (path: string) => {
      const response = await fetch(`${url}${path}`)
      return response.status
    }
    for (const id of [1, 2, 3]) assert.equal(await status(`/users/${id}`), 200)
    assert.equal(await status('/broken'), 503)
    assert.equal(await status('/no-such-page'), 404)
    // the console's own API is never rolled up
    await status('/console/api/health')
    await manager.recorder.flush()

    const now = Date.now()
    const rows = await manager.store.rollups(minuteOf(now) - MINUTE, minuteOf(now) + MINUTE)
    // the requests may straddle a minute boundary: sum each route's rows
    const byRoute: Record<string, { method: string; requests: number; errors: number }> = {}
    for (const row of rows) {
      const sum = (byRoute[row.route] ??= { method: row.method, requests: 0, errors: 0 })
      sum.requests += row.requests
      sum.errors += row.errors
    }
    assert.sameMembers(Object.keys(byRoute), ['/users/:id', '/broken', UNMATCHED_ROUTE])
    assert.equal(byRoute['/users/:id'].requests, 3)
    assert.equal(byRoute['/users/:id'].errors, 0)
    assert.equal(byRoute['/broken'].errors, 1)
    assert.equal(byRoute['/users/:id'].method, 'GET')
  })

  test('two flushes of the same minute and route add up, and the histogram merges', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const at = minuteOf(Date.now()) - 5 * MINUTE + 1000
    await manager.store.write(minuteOfRequests(at, '/orders', 50))
    await manager.store.write(minuteOfRequests(at, '/orders', 50, 50))
    const [row] = await manager.store.rollups(minuteOf(at), minuteOf(at) + MINUTE)
    assert.equal(row.minute, minuteOf(at))
    assert.equal(row.requests, 100)
    assert.equal(row.errors, 10)
    assert.equal(row.durationSumMs, (100 * 101) / 2)
    assert.equal(row.durationMaxMs, 100)
    const histogram = decode(row.histogram)
    assert.equal(total(histogram), 100)
    // durations 1..100 ms: the buckets are within 4.5% of the true quantiles
    assert.closeTo(quantile(histogram, 0.5)!, 50, 50 * 0.05)
    assert.closeTo(quantile(histogram, 0.99)!, 99, 99 * 0.05)
  })

  test('concurrent flushes of two instances on one database add up', async ({ assert }) => {
    const first = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    // a second app on the same tables: another instance of the same service
    const second = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const at = minuteOf(Date.now()) - 3 * MINUTE + 500
    const writes: Promise<void>[] = []
    for (let round = 0; round < 6; round++) {
      for (const app of [first, second]) {
        // each flush touches both routes, in both orders of arrival
        const entries = [
          ...minuteOfRequests(at, '/a', 20, round),
          ...minuteOfRequests(at, '/b', 10, round),
        ]
        writes.push(app.manager.store.write(round % 2 ? entries.reverse() : entries))
      }
    }
    await Promise.all(writes)
    const rows = await first.manager.store.rollups(minuteOf(at), minuteOf(at) + MINUTE)
    const routeA = rows.find((row) => row.route === '/a')!
    const routeB = rows.find((row) => row.route === '/b')!
    assert.equal(routeA.requests, 12 * 20)
    assert.equal(routeB.requests, 12 * 10)
    assert.equal(routeA.errors, 12 * 2)
    assert.equal(total(decode(routeA.histogram)), 12 * 20)
    assert.equal(total(decode(routeB.histogram)), 12 * 10)
    assert.equal(routeA.durationMaxMs, 25)
  })

  test('a method wider than its column and routes that differ by trailing spaces share one row', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    const at = minuteOf(Date.now()) - 7 * MINUTE + 10
    await manager.store.write([
      requestEntry(at, '/feeds/:id', 3, 200, 'UNSUBSCRIBE'),
      requestEntry(at, '/feeds/:id  ', 4, 200, 'UNSUBSCRIBE'),
      requestEntry(at, '   ', 5, 200, 'GET'),
    ])
    const rows = await manager.store.rollups(minuteOf(at), minuteOf(at) + MINUTE)
    assert.deepEqual(
      rows.map((row) => [row.method, row.route, row.requests]),
      [
        ['GET', UNMATCHED_ROUTE, 1],
        ['UNSUBSCRIB', '/feeds/:id', 2],
      ]
    )
  })

  test('the memory store keeps the same rollups', async ({ assert }) => {
    const { manager } = await consoleApp({
      config: { storage: stores.memory(), buffer: { flushIntervalMs: 60_000 } },
    })
    const at = minuteOf(Date.now()) + 10
    await Promise.all([
      manager.store.write(minuteOfRequests(at, '/m', 10)),
      manager.store.write(minuteOfRequests(at, '/m', 10)),
      manager.store.write(minuteOfRequests(at - MINUTE, '/m', 5)),
    ])
    const rows = await manager.store.rollups(minuteOf(at) - MINUTE, minuteOf(at) + MINUTE)
    assert.deepEqual(
      rows.map((row) => [row.minute, row.requests, row.errors, total(decode(row.histogram))]),
      [
        [minuteOf(at) - MINUTE, 5, 0, 5],
        [minuteOf(at), 20, 2, 20],
      ]
    )
  })

  for (const storage of ['database', 'memory'] as const) {
    test(`prune deletes rollup rows by age (${storage} store)`, async ({ assert }) => {
      const { manager } = await consoleApp({
        config: {
          storage: storage === 'memory' ? stores.memory() : undefined,
          buffer: { flushIntervalMs: 60_000 },
          prune: { after: '1h', rollupsAfter: '2h' },
        },
      })
      const now = Date.now()
      await manager.store.write([
        requestEntry(now - 3 * 3600_000, '/old', 5),
        requestEntry(now - 90 * MINUTE, '/kept', 5),
        requestEntry(now, '/new', 5),
      ])
      const deleted = await manager.prune(now)
      assert.equal(deleted.rollups, 1)
      assert.equal(deleted.request, 2)
      const rows = await manager.store.rollups(0, now + MINUTE)
      assert.deepEqual(
        rows.map((row) => row.route),
        ['/kept', '/new']
      )
    })
  }
})
