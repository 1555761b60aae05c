import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { defineConfig as redisConfig } from '@adonisjs/redis'
import { defineConfig as cacheConfig, drivers, store } from '@adonisjs/cache'
import { defineConfig as mailConfig } from '@adonisjs/mail'
import { JSONTransport } from '@adonisjs/mail/transports/json'
import { consoleApp } from './helpers.ts'
import { createRedis, SERVICES } from '../helpers.ts'
import { watchers } from '../../src/console/main.ts'
import { redisArguments } from '../../src/console/watchers/redis_arguments.ts'
import type { ConsoleConfig, ConsoleEntry } from '../../src/console/types.ts'

/** The child entries of the newest request's batch */
async function lastBatch(manager: Awaited<ReturnType<typeof consoleApp>>['manager']) {
  await manager.recorder.flush()
  const { data } = await manager.store.list({ type: 'request', limit: 1 })
  return manager.store.batch(data[0].batchId)
}

/** A request to the test app and its JSON answer */
async function call(url: string, init?: RequestInit) {
  const response = await fetch(url, init)
  return response.json()
}

function ofType(entries: ConsoleEntry[], type: string) {
  return entries.filter((entry) => entry.type === type)
}

async function redisApp(config: ConsoleConfig, prefix: string) {
  const state: { redis?: any } = {}
  const app = await consoleApp({
    config: { buffer: { flushIntervalMs: 60_000 }, ...config },
    providers: [() => import('@adonisjs/redis/redis_provider')],
    appConfig: {
      redis: redisConfig({
        connection: 'main',
        connections: { main: { ...SERVICES.redis, maxRetriesPerRequest: 1 } },
      }),
    },
    routes(router) {
      router.get('/redis', async () => {
        await state.redis.set(`${prefix}:session`, 'super-secret-session-value')
        await state.redis.hset(`${prefix}:user`, 'password', 'hash-secret-value', 'name', 'ada')
        return { value: await state.redis.get(`${prefix}:session`) }
      })
    },
  })
  state.redis = await app.app.container.make('redis')
  createRedis(prefix)
  return app
}

test.group('Console watchers: Redis', () => {
  test('commands join the request batch with written values replaced by their length', async ({
    assert,
  }) => {
    const prefix = `console-test-${randomUUID()}`
    const { url, manager } = await redisApp({ watchers: [watchers.redis()] }, prefix)
    const response = await fetch(`${url}/redis`)
    assert.deepEqual(await response.json(), { value: 'super-secret-session-value' })

    const commands = ofType(await lastBatch(manager), 'redis')
    const byName = Object.fromEntries(commands.map((entry) => [entry.content.command, entry]))
    assert.deepEqual(byName.SET.content.args, [`${prefix}:session`, '[26 bytes]'])
    assert.deepEqual(byName.HSET.content.args, [
      `${prefix}:user`,
      'password',
      '[17 bytes]',
      'name',
      '[3 bytes]',
    ])
    assert.deepEqual(byName.GET.content.args, [`${prefix}:session`])
    assert.equal(byName.GET.content.connection, 'main')
    assert.isNumber(byName.GET.durationMs)
    assert.equal(byName.SET.summary, `SET ${prefix}:session [26 bytes]`)
    const stored = JSON.stringify(commands)
    assert.notInclude(stored, 'super-secret-session-value')
    assert.notInclude(stored, 'hash-secret-value')
  })

  test('a command sent outside any request is an entry of its own batch', async ({ assert }) => {
    const prefix = `console-test-${randomUUID()}`
    const { app, manager } = await redisApp({ watchers: [watchers.redis()] }, prefix)
    const redis = await app.container.make('redis')
    await redis.connection('main').setex(`${prefix}:job`, 60, 'job-secret-payload')
    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'redis', limit: 5 })
    const [setex] = data.filter((entry) => entry.summary.startsWith('SETEX'))
    assert.equal(setex.batchId, setex.id)
    assert.equal(setex.summary, `SETEX ${prefix}:job 60 [18 bytes]`)
  })

  test('nothing is recorded without watchers.redis()', async ({ assert }) => {
    const prefix = `console-test-${randomUUID()}`
    const { url, manager } = await redisApp({ watchers: [] }, prefix)
    await call(`${url}/redis`)
    assert.lengthOf(ofType(await lastBatch(manager), 'redis'), 0)
    const { data } = await manager.store.list({ type: 'redis', limit: 10 })
    assert.lengthOf(data, 0)
  })
})

async function cacheApp(config: ConsoleConfig) {
  const state: { cache?: any } = {}
  const app = await consoleApp({
    config: { buffer: { flushIntervalMs: 60_000 }, ...config },
    providers: [() => import('@adonisjs/cache/cache_provider')],
    appConfig: {
      cache: cacheConfig({
        default: 'memory',
        stores: { memory: store().useL1Layer(drivers.memory({})) },
      }),
    },
    routes(router) {
      router.get('/cache', async () => {
        await state.cache.set({ key: 'user:1', value: { name: 'ada', password: 'cache-secret' } })
        const hit = await state.cache.get({ key: 'user:1' })
        const miss = await state.cache.get({ key: 'user:2' })
        await state.cache.delete({ key: 'user:1' })
        return { hit: hit.name, miss: miss ?? null }
      })
    },
  })
  state.cache = await app.app.container.make('cache.manager')
  return app
}

test.group('Console watchers: cache', () => {
  test('set, hit, miss and delete join the request batch without their values', async ({
    assert,
  }) => {
    const { url, manager } = await cacheApp({ watchers: [watchers.cache()] })
    assert.deepEqual(await call(`${url}/cache`), { hit: 'ada', miss: null })

    const operations = ofType(await lastBatch(manager), 'cache')
    assert.deepEqual(
      operations.map((entry) => [entry.content.operation, entry.content.key, entry.content.hit]),
      [
        // Bentocache's full keys: its prefix, then the key
        ['set', 'bentocache:user:1', null],
        ['get', 'bentocache:user:1', true],
        ['get', 'bentocache:user:2', false],
        ['delete', 'bentocache:user:1', null],
      ]
    )
    assert.equal(operations[1].summary, 'get bentocache:user:1 hit')
    assert.deepEqual(operations[2].tags, ['miss'])
    assert.equal(operations[0].content.store, 'memory')
    assert.isNumber(operations[0].durationMs)
    assert.notProperty(operations[0].content, 'value')
    assert.notInclude(JSON.stringify(operations), 'cache-secret')
  })

  test('values: true records values redacted', async ({ assert }) => {
    const { url, manager } = await cacheApp({ watchers: [watchers.cache({ values: true })] })
    await call(`${url}/cache`)
    const [set, hit] = ofType(await lastBatch(manager), 'cache')
    assert.deepEqual(set.content.value, { name: 'ada', password: '[redacted]' })
    assert.deepEqual(hit.content.value, { name: 'ada', password: '[redacted]' })
    assert.notInclude(JSON.stringify(set), 'cache-secret')
  })

  test('nothing is recorded without watchers.cache()', async ({ assert }) => {
    const { url, manager } = await cacheApp({ watchers: [] })
    await call(`${url}/cache`)
    assert.lengthOf(ofType(await lastBatch(manager), 'cache'), 0)
  })
})

async function mailApp(config: ConsoleConfig) {
  const state: { mail?: any } = {}
  const app = await consoleApp({
    config: { buffer: { flushIntervalMs: 60_000 }, ...config },
    providers: [() => import('@adonisjs/mail/mail_provider')],
    appConfig: {
      mail: mailConfig({
        default: 'json',
        from: { address: 'app@example.com', name: 'App' },
        mailers: { json: () => new JSONTransport() },
      }),
    },
    routes(router) {
      router.post('/reset', async () => {
        await state.mail.send((message: any) => {
          message
            .to('ada@example.com')
            .cc('ops@example.com')
            .subject('Reset your password')
            .html('<p>Your reset token is body-secret-token</p>')
        })
        return { sent: true }
      })
    },
  })
  state.mail = await app.app.container.make('mail.manager')
  return app
}

test.group('Console watchers: mail', () => {
  test('a sent mail joins the request batch with its addresses and subject, not its body', async ({
    assert,
  }) => {
    const { url, manager } = await mailApp({ watchers: [watchers.mail()] })
    assert.deepEqual(await call(`${url}/reset`, { method: 'POST' }), {
      sent: true,
    })
    const [mail] = ofType(await lastBatch(manager), 'mail')
    assert.equal(mail.content.mailer, 'json')
    assert.equal(mail.content.from, 'App <app@example.com>')
    assert.deepEqual(mail.content.to, ['ada@example.com'])
    assert.deepEqual(mail.content.cc, ['ops@example.com'])
    assert.equal(mail.content.subject, 'Reset your password')
    assert.isString(mail.content.messageId)
    assert.equal(mail.summary, 'Reset your password → ada@example.com')
    assert.notInclude(JSON.stringify(mail), 'body-secret-token')
  })

  test('bodies: true records the body; nothing is recorded without watchers.mail()', async ({
    assert,
  }) => {
    const withBodies = await mailApp({ watchers: [watchers.mail({ bodies: true })] })
    await call(`${withBodies.url}/reset`, { method: 'POST' })
    const [mail] = ofType(await lastBatch(withBodies.manager), 'mail')
    assert.include(String(mail.content.html), 'body-secret-token')

    const without = await mailApp({ watchers: [] })
    await call(`${without.url}/reset`, { method: 'POST' })
    assert.lengthOf(ofType(await lastBatch(without.manager), 'mail'), 0)
  })
})

test.group('Console watchers: Redis arguments', () => {
  test('credentials are hidden whole and written values become their length', ({ assert }) => {
    assert.deepEqual(redisArguments('auth', ['admin', 'redis-password']), ['[2 arguments hidden]'])
    assert.deepEqual(redisArguments('HELLO', ['3', 'AUTH', 'u', 'p']), ['[4 arguments hidden]'])
    assert.deepEqual(redisArguments('MSET', ['a', 'secret-a', 'b', Buffer.from('xyz')]), [
      'a',
      '[8 bytes]',
      'b',
      '[3 bytes]',
    ])
    assert.deepEqual(redisArguments('SETEX', ['k', '60', 'secret']), ['k', '60', '[6 bytes]'])
    assert.deepEqual(redisArguments('EVAL', ['return 1', '1', 'key', 'arg-secret']), [
      'return 1',
      '1',
      'key',
      '[10 bytes]',
    ])
    assert.deepEqual(redisArguments('PUBLISH', ['chan', 'message-secret']), ['chan', '[14 bytes]'])
    // an unknown command keeps its first argument only
    assert.deepEqual(redisArguments('MODULE.CMD', ['key', 'maybe-secret']), ['key', '[12 bytes]'])
    assert.deepEqual(redisArguments('DEL', ['a', 'b']), ['a', 'b'])
    const many = redisArguments(
      'DEL',
      Array.from({ length: 25 }, (_, index) => `k${index}`)
    )
    assert.lengthOf(many, 21)
    assert.equal(many[20], '[5 more arguments]')
  })
})
