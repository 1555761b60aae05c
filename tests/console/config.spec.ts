import { test } from '@japa/runner'
import { LoggerManager } from '@adonisjs/core/logger'
import {
  alertChannels,
  alertRules,
  defineConfig,
  parseCookieHeader,
  readCookieHeader,
  stores,
} from '../../src/console/main.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import { MemoryConsoleStore } from '../../src/console/stores/memory.ts'
import { consoleApp, SECRET } from './helpers.ts'
import { setupApp } from '../helpers.ts'

test.group('Console config', () => {
  test('dashboardAuth without a secret, with an empty or short one, or without a mode fails at boot, naming the fix', ({
    assert,
  }) => {
    const login = () => null
    assert.throws(
      () => defineConfig({ dashboardAuth: { login } as any }),
      /Missing "dashboardAuth.secret" in config\/console.ts\. Set CONSOLE_SESSION_SECRET/
    )
    assert.throws(
      () => defineConfig({ dashboardAuth: { secret: '', login } }),
      /Missing "dashboardAuth.secret"/
    )
    assert.throws(
      () => defineConfig({ dashboardAuth: { secret: 'short-secret', login } }),
      /"dashboardAuth.secret" in config\/console.ts is 12 bytes; use at least 32 random bytes/
    )
    assert.throws(
      () => defineConfig({ dashboardAuth: { secret: SECRET, revalidate: () => true } }),
      /"dashboardAuth" in config\/console.ts needs a "session" hook .* or a "login" hook/
    )
  })

  test('durations accept strings and milliseconds; modes never list revalidate', ({ assert }) => {
    const fromString = resolveConsoleConfig({
      dashboardAuth: { secret: SECRET, ttl: '2h', login: () => null, revalidate: () => true },
      prune: { after: '24h', perType: { query: '30m' } },
    })
    assert.equal(fromString.dashboardAuth!.ttlMs, 2 * 3600_000)
    assert.deepEqual(fromString.dashboardAuth!.modes, ['login'])
    assert.equal(fromString.prune.after, 24 * 3600_000)
    assert.equal(fromString.prune.perType.query, 30 * 60_000)

    const fromMs = resolveConsoleConfig({
      dashboardAuth: { secret: SECRET, ttl: 90_000, session: () => null, login: () => null },
    })
    assert.equal(fromMs.dashboardAuth!.ttlMs, 90_000)
    assert.deepEqual(fromMs.dashboardAuth!.modes, ['session', 'login'])
    assert.equal(
      resolveConsoleConfig({ dashboardAuth: { secret: SECRET, login: () => null } }).dashboardAuth!
        .ttlMs,
      8 * 3600_000
    )
  })

  test('bad values are config errors naming the key', ({ assert }) => {
    assert.throws(() => resolveConsoleConfig({ prune: { after: 'soon' } }), /Invalid "prune.after"/)
    assert.throws(
      () => resolveConsoleConfig({ sampling: { request: 2 } }),
      /Invalid "sampling.request"/
    )
    assert.throws(
      () => resolveConsoleConfig({ sampling: { jobs: 0.5 } as any }),
      /Unknown entry type "jobs"/
    )
    assert.throws(() => resolveConsoleConfig({ path: 'console/' }), /Invalid "path"/)
    assert.throws(() => resolveConsoleConfig({ authorizer: true as any }), /Invalid "authorizer"/)
  })

  test('defaults: /console, the request body cap, 4xx off, deny-by-default hooks unset', ({
    assert,
  }) => {
    const config = resolveConsoleConfig({})
    assert.equal(config.path, '/console')
    assert.equal(config.requestCapture.maxBodyBytes, 128 * 1024)
    assert.isFalse(config.exceptions.captureHttp4xx)
    assert.isUndefined(config.authorizeAction)
    assert.equal(config.storage.driver, 'database')
    assert.deepInclude(config.prune, { batchSize: 1000, maxBatchesPerCycle: 50, batchPauseMs: 50 })
  })

  test('parseCookieHeader and readCookieHeader never throw on hostile headers', ({ assert }) => {
    assert.deepEqual(
      { ...parseCookieHeader('a=1; b="two"; c=%E0%A4%A; =x; d; a=dup; e=%20ok') },
      {
        a: '1',
        b: 'two',
        c: '%E0%A4%A',
        e: ' ok',
      }
    )
    assert.deepEqual({ ...parseCookieHeader(undefined) }, {})
    assert.deepEqual({ ...parseCookieHeader('') }, {})
    assert.deepEqual({ ...readCookieHeader({ headers: { cookie: 'x=1' } }) }, { x: '1' })
    assert.deepEqual(
      { ...readCookieHeader({ headers: { cookie: ['x=1', 'y=2'] as any } }) },
      { x: '1', y: '2' }
    )
    // a cookie named like a prototype key is a plain entry, not a prototype change
    assert.deepEqual(Object.entries(parseCookieHeader('__proto__=1')), [['__proto__', '1']])
  })

  test('one boot log line states the effective gates', async ({ assert }) => {
    const infos: string[] = []
    const info = LoggerManager.prototype.info
    LoggerManager.prototype.info = function (this: any, message: any, ...rest: any[]) {
      if (typeof message === 'string') infos.push(message)
      return info.call(this, message, ...rest)
    }
    let app
    try {
      app = await consoleApp({
        config: { storage: stores.memory(), dashboardAuth: { secret: SECRET, login: () => null } },
      })
    } finally {
      LoggerManager.prototype.info = info
    }
    assert.deepEqual(
      infos.filter((line) => line.startsWith('console at')),
      [
        'console at /console: API gate session cookie (login); reads any signed-in session; mutations denied (no authorizeAction); API middleware 0; page middleware 0; MCP off',
      ]
    )
    assert.instanceOf(app.manager.store, MemoryConsoleStore)
  })
  test('defineConfig names the alert option at fault', ({ assert }) => {
    const channel = alertChannels.log()
    const rule = alertRules.exceptions({ over: 5 })
    const cases: [ConsoleConfig['alerts'], RegExp][] = [
      [{ channels: [], rules: [rule] }, /Missing "alerts.channels" in config\/console.ts/],
      [{ channels: [channel], rules: [] }, /Missing "alerts.rules" in config\/console.ts/],
      [
        { channels: [channel], rules: [alertRules.exceptions({ over: -1 })] },
        /Invalid "alerts.rules\[0\].over" in config\/console.ts/,
      ],
      [
        { channels: [channel], rules: [alertRules.errorRate({ over: 5 })] },
        /Invalid "alerts.rules\[0\].over" in config\/console.ts: use a number from 0 to 1/,
      ],
      [
        { channels: [channel], rules: [rule, alertRules.exceptions({ over: 9 })] },
        /"alerts.rules\[1\]" in config\/console.ts is named "exceptions" like an earlier rule/,
      ],
      [
        { channels: [channel], rules: [alertRules.exceptions({ over: 1, within: '10s' })] },
        /Invalid "alerts.rules\[0\].within" in config\/console.ts: use a window from '1m' to '24h'/,
      ],
      [
        { channels: [channel], rules: [{ kind: 'disk' } as any] },
        /Invalid "alerts.rules\[0\]" in config\/console.ts: build each rule with alertRules/,
      ],
      [
        { channels: [{ name: 'pager' } as any], rules: [rule] },
        /Invalid "alerts.channels\[0\]" in config\/console.ts/,
      ],
      [
        { channels: [channel, alertChannels.log()], rules: [rule] },
        /Two "alerts.channels" in config\/console.ts share a name/,
      ],
    ]
    for (const [alerts, message] of cases) {
      assert.throws(() => defineConfig({ storage: stores.memory(), alerts }), message)
    }
    assert.throws(
      () => alertChannels.webhook({ url: 'ftp://hooks.example.com' }),
      /Invalid "url" of alertChannels.webhook\(\) in "alerts.channels" of config\/console.ts/
    )
  })
})

test.group('Console provider', () => {
  test('an app without config/console.ts fails at boot naming the file and defineConfig', async ({
    assert,
  }) => {
    await assert.rejects(
      () => setupApp({ providers: [() => import('../../providers/console_provider.ts')] }),
      /Missing config\/console\.ts\. Run "node ace configure adonis-atrium --features=console" or export defineConfig/
    )
  })

  test('enabled: false mounts no route and records nothing', async ({ assert }) => {
    const app = await consoleApp({
      config: { enabled: false, storage: stores.memory() },
      routes: (router) => router.get('/ping', () => 'pong'),
    })
    assert.equal(await fetch(`${app.url}/ping`).then((value) => value.status), 200)
    assert.equal(await app.api('/requests').then((value) => value.status), 404)
    assert.equal(await fetch(`${app.url}/console`).then((value) => value.status), 404)
    await app.manager.recorder.flush()
    const page = await app.manager.store.list({ type: 'request', limit: 10 })
    assert.lengthOf(page.data, 0)
  })

  test('the memory store serves the same API as the database store', async ({ assert }) => {
    const app = await consoleApp({
      config: { storage: stores.memory(), buffer: { flushIntervalMs: 60_000 } },
      routes: (router) => {
        router.get('/ping', () => 'pong')
        router.get('/fail', () => {
          throw new Error('memory kaboom')
        })
      },
    })
    await fetch(`${app.url}/ping`)
    await fetch(`${app.url}/fail`)
    await app.manager.recorder.flush()
    const failing = await app.api('/requests?status=5xx').then((value) => value.json() as any)
    assert.deepEqual(
      failing.data.map((entry: any) => entry.summary),
      ['GET /fail']
    )
    const batch = await app
      .api(`/batches/${failing.data[0].batchId}`)
      .then((value) => value.json() as any)
    assert.deepEqual(
      batch.data.entries.map((entry: any) => entry.type),
      ['request', 'exception']
    )
    const first = await app.api('/requests?limit=1').then((value) => value.json() as any)
    const second = await app
      .api(`/requests?limit=1&before=${first.nextCursor}`)
      .then((value) => value.json() as any)
    assert.equal(second.data[0].summary, 'GET /ping')
    assert.isNull(second.nextCursor)
  })
})
