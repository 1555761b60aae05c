import { setTimeout } from 'node:timers/promises'
import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import { exceptionEntry, logEntry, requestEntry } from './entry_factories.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import {
  MAX_EXCEPTIONS_SCANNED,
  ROW_COUNTS_TTL_MS,
  cachedRowCounts,
} from '../../src/console/pulse.ts'
import type { ConsoleStore } from '../../src/console/stores/contract.ts'
import { minuteOf } from '../../src/console/rollups/route_minute.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

const MINUTE = 60_000

/**
 * The API reads the clock when it answers: entries written in the last
 * seconds of a minute would fall one slot earlier than the test expects, so
 * start writing with at least five seconds of the minute left.
 */
async function clearOfMinuteEnd() {
  const left = MINUTE - (Date.now() % MINUTE)
  if (left < 5000) await setTimeout(left + 10)
}

/** An app whose store holds ten minutes of known traffic and exceptions */
async function pulseApp(config: ConsoleConfig = {}) {
  const app = await consoleApp({
    config: { buffer: { flushIntervalMs: 60_000 }, pulse: { slowRouteMs: 200 }, ...config },
  })
  await clearOfMinuteEnd()
  const now = Date.now()
  const twoMinutesAgo = minuteOf(now) - 2 * MINUTE + 1000
  const entries = [
    // /fast: 100 requests of 1..100 ms two minutes ago, every 25th a 500
    ...Array.from({ length: 100 }, (_, index) =>
      requestEntry(twoMinutesAgo, '/fast', index + 1, (index + 1) % 25 === 0 ? 500 : 200)
    ),
    // /slow: 20 requests of 300 ms, one of 2000 ms, in the current minute
    ...Array.from({ length: 20 }, () => requestEntry(now, '/slow/:id', 300, 200, 'POST')),
    requestEntry(now, '/slow/:id', 2000, 200, 'POST'),
    // outside a five-minute window
    ...Array.from({ length: 7 }, () => requestEntry(now - 30 * MINUTE, '/old', 5)),
    exceptionEntry(twoMinutesAgo, 'NotFoundException: User 12 not found'),
    exceptionEntry(twoMinutesAgo + 10, 'NotFoundException: User 40 not found'),
    exceptionEntry(now, 'NotFoundException: User 7 not found'),
    exceptionEntry(now, 'TypeError: Cannot read properties of undefined (reading "id")'),
    exceptionEntry(now - 30 * MINUTE, 'RangeError: too old to count'),
    logEntry(now, 'info: hello'),
  ]
  await app.manager.store.write(entries)
  const health = async (query = '') => {
    const response = await app.api(`/health${query}`)
    return { status: response.status, body: (await response.json()) as any }
  }
  return { ...app, health, now }
}

test.group('Console health pulse', () => {
  for (const storage of ['database', 'memory'] as const) {
    test(`throughput, route percentiles and slow routes come from the rollups (${storage} store)`, async ({
      assert,
    }) => {
      const { health } = await pulseApp(storage === 'memory' ? { storage: stores.memory() } : {})
      const { status, body } = await health('?minutes=5')
      assert.equal(status, 200)
      const data = body.data
      assert.equal(data.recorder.state, 'running')
      assert.equal(data.window.minutes, 5)
      assert.equal(data.window.to - data.window.from, 5 * MINUTE)
      assert.equal(data.throughput.requests, 121)
      assert.equal(data.throughput.errors, 4)
      assert.equal(data.throughput.perMinute, 24.2)
      assert.lengthOf(data.throughput.series, 5)
      assert.deepEqual(
        data.throughput.series.map((slot: any) => slot.requests),
        [0, 0, 100, 0, 21]
      )

      const fast = data.routes.find((route: any) => route.route === '/fast')
      assert.containSubset(fast, { method: 'GET', requests: 100, errors: 4, maxMs: 100 })
      assert.closeTo(fast.p50Ms, 50, 50 * 0.05)
      assert.closeTo(fast.p99Ms, 99, 99 * 0.05)
      assert.equal(fast.avgMs, 50.5)
      const slow = data.routes.find((route: any) => route.route === '/slow/:id')
      assert.closeTo(slow.p50Ms, 300, 300 * 0.05)
      assert.closeTo(slow.p99Ms, 2000, 2000 * 0.05)
      assert.isUndefined(data.routes.find((route: any) => route.route === '/old'))

      // pulse.slowRouteMs is 200: only /slow/:id has a p99 that high
      assert.deepEqual(
        data.slowRoutes.map((route: any) => [route.method, route.route, route.requests]),
        [['POST', '/slow/:id', 21]]
      )
    })

    test(`exception families group messages that differ in numbers; storage counts rows (${storage} store)`, async ({
      assert,
    }) => {
      const { health } = await pulseApp(storage === 'memory' ? { storage: stores.memory() } : {})
      const { body } = await health('?minutes=5')
      const { exceptions, storage: stored } = body.data
      assert.equal(exceptions.scanned, 4)
      assert.isFalse(exceptions.truncated)
      assert.deepEqual(
        exceptions.families.map((family: any) => [family.class, family.message, family.count]),
        [
          ['NotFoundException', 'User <n> not found', 3],
          ['TypeError', 'Cannot read properties of undefined (reading ?)', 1],
        ]
      )
      assert.match(exceptions.families[0].fingerprint, /^[0-9a-f]{12}$/)
      assert.deepEqual(stored.entries, { request: 128, exception: 5, log: 1 })
      // /fast two minutes ago, /slow/:id now, /old thirty minutes ago
      assert.equal(stored.rollups, 3)
    })
  }

  test('the window defaults to pulse.windowMinutes and widens to what ?minutes asks', async ({
    assert,
  }) => {
    const { health } = await pulseApp({ pulse: { slowRouteMs: 200, windowMinutes: 1 } })
    const narrow = await health()
    assert.equal(narrow.body.data.window.minutes, 1)
    assert.equal(narrow.body.data.throughput.requests, 21)
    const wide = await health('?minutes=1440')
    assert.equal(wide.body.data.throughput.requests, 128)
    assert.lengthOf(wide.body.data.throughput.series, 1440)
    assert.equal(wide.body.data.exceptions.scanned, 5)
  })

  test('exception families read at most the newest 1000 exceptions of the window and say so', async ({
    assert,
  }) => {
    const { manager, health, now } = await pulseApp()
    await manager.store.write(
      Array.from({ length: MAX_EXCEPTIONS_SCANNED }, (_, index) =>
        exceptionEntry(now - index, `QueueException: job ${index} failed`)
      )
    )
    const { body } = await health('?minutes=5')
    assert.equal(body.data.exceptions.scanned, MAX_EXCEPTIONS_SCANNED)
    assert.isTrue(body.data.exceptions.truncated)
    assert.containSubset(body.data.exceptions.families[0], {
      class: 'QueueException',
      message: 'job <n> failed',
    })
  })

  test('a minutes outside 1..1440 is a 400 naming the bound', async ({ assert }) => {
    const { health } = await pulseApp()
    for (const query of [
      '?minutes=0',
      '?minutes=1441',
      '?minutes=-5',
      '?minutes=abc',
      '?minutes=1e3',
      '?minutes=60.5',
      '?minutes=99999999999999999999',
      '?minutes=1&minutes=2',
      '?minutes[a]=1',
    ]) {
      const { status, body } = await health(query)
      assert.equal(status, 400, query)
      assert.deepEqual(
        body.errors[0],
        {
          code: 'E_CONSOLE_INVALID_QUERY',
          message: '"minutes" must be a whole number from 1 to 1440',
          parameter: 'minutes',
        },
        query
      )
    }
  })

  test('pulse options are checked when the config loads, naming the option', ({ assert }) => {
    for (const value of [0, -1, 1.5, '1000']) {
      assert.throws(
        () => defineConfig({ pulse: { slowRouteMs: value as number } }),
        /Invalid "pulse\.slowRouteMs" in config\/console\.ts/
      )
    }
    for (const value of [0, 1441, 2.5]) {
      assert.throws(
        () => defineConfig({ pulse: { windowMinutes: value } }),
        /Invalid "pulse\.windowMinutes" in config\/console\.ts: use a whole number of minutes from 1 to 1440/
      )
    }
    assert.throws(() => defineConfig({ pulse: 5 as any }), /Invalid "pulse" in config\/console\.ts/)
    assert.throws(
      () => defineConfig({ prune: { rollupsAfter: 'soon' } }),
      /Invalid "prune\.rollupsAfter" in config\/console\.ts/
    )
  })
})

test.group('Console pulse | stored-row counts', () => {
  test('counted once per 30 s and shared by concurrent health requests; a failed count is not kept', async ({
    assert,
  }) => {
    let counts = 0
    let fail = false
    const store = {
      countRows: async () => {
        counts++
        if (fail) throw new Error('database away')
        return { entries: { request: counts }, rollups: 0 }
      },
    } as unknown as ConsoleStore
    const start = 1_000_000
    const [first, second] = await Promise.all([
      cachedRowCounts(store, start),
      cachedRowCounts(store, start),
    ])
    const later = await cachedRowCounts(store, start + ROW_COUNTS_TTL_MS - 1)
    assert.equal(counts, 1)
    assert.deepEqual(
      [first, second, later],
      Array(3).fill({ entries: { request: 1 }, rollups: 0, countedAt: start })
    )

    fail = true
    await assert.rejects(() => cachedRowCounts(store, start + ROW_COUNTS_TTL_MS), 'database away')
    fail = false
    const recounted = await cachedRowCounts(store, start + ROW_COUNTS_TTL_MS + 1)
    assert.equal(counts, 3)
    assert.deepEqual(recounted.entries, { request: 3 })
  })
})
