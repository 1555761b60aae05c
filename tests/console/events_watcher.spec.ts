import { test } from '@japa/runner'
import { BaseEvent } from '@adonisjs/core/events'
import type { Router } from '@adonisjs/core/http'
import { consoleApp } from './helpers.ts'
import { defineConsoleExtension, watchers } from '../../src/console/main.ts'
import type { ConsoleConfig, ConsoleEntry } from '../../src/console/types.ts'

/** A class-based event, as `node ace make:event` writes one */
class OrderShipped extends BaseEvent {
  constructor(
    public orderId: number,
    public card: { last4: string; cvv: string }
  ) {
    super()
  }
}

/** A record with a `toJSON` of its own, as a Lucid model serialises itself */
class Customer {
  $attributes = { id: 7, email: 'ada@example.com', passwordHash: 'bcrypt-hash-secret' }
  toJSON() {
    return { id: this.$attributes.id, email: this.$attributes.email }
  }
}

function hostRoutes(router: Router) {
  router.get('/checkout/:id', async (ctx) => {
    const emitter = await ctx.containerResolver.make('emitter')
    await emitter.emit('order:placed' as any, {
      orderId: Number(ctx.params.id),
      password: 'event-secret-password',
      customer: new Customer(),
    })
    await emitter.emit(
      OrderShipped,
      new OrderShipped(Number(ctx.params.id), { last4: '4242', cvv: '123' })
    )
    // framework plumbing and what other watchers record: skipped by default
    await emitter.emit('session:committed' as any, { session: 'x' })
    await emitter.emit('db:query' as any, { sql: 'select 1' })
    await emitter.emit('audit:noise' as any, { ignored: true })
    await emitter.emit('report:built' as any, { rows: 'x'.repeat(5000) })
    return { ok: true }
  })
}

async function eventsApp(config: ConsoleConfig) {
  const app = await consoleApp({
    config: { buffer: { flushIntervalMs: 60_000 }, ...config },
    routes: hostRoutes,
  })
  const emitter = await app.app.container.make('emitter')
  return { ...app, emitter }
}

/** The entries of the newest request's batch */
async function lastBatch(manager: Awaited<ReturnType<typeof consoleApp>>['manager']) {
  await manager.recorder.flush()
  const { data } = await manager.store.list({ type: 'request', limit: 1 })
  return manager.store.batch(data[0].batchId)
}

const events = (entries: ConsoleEntry[]) => entries.filter((entry) => entry.type === 'event')

test.group('Console watchers: emitter events', () => {
  test('the app’s events join the request batch redacted, class-based ones by class name', async ({
    assert,
  }) => {
    const { url, manager, emitter } = await eventsApp({
      watchers: [watchers.events({ exclude: ['audit:noise'] })],
    })
    const response = await fetch(`${url}/checkout/7`)
    assert.equal(response.status, 200)
    const batch = await lastBatch(manager)
    const recorded = events(batch)
    assert.deepEqual(
      recorded.map((entry) => entry.summary),
      ['order:placed', 'OrderShipped', 'report:built']
    )
    const [placed, shipped] = recorded
    assert.deepEqual(placed.content.payload, {
      orderId: 7,
      password: '[redacted]',
      customer: { id: 7, email: 'ada@example.com' },
    })
    assert.isFalse(placed.content.classBased)
    assert.deepEqual(shipped.content.payload, {
      orderId: 7,
      card: { last4: '4242', cvv: '[redacted]' },
    })
    assert.isTrue(shipped.content.classBased)
    assert.notInclude(JSON.stringify(batch), 'event-secret-password')
    assert.notInclude(JSON.stringify(batch), 'bcrypt-hash-secret')
    // the watcher listens on the tracing channel: the HTTP server still sees no listener
    assert.isFalse(emitter.hasListeners('http:request_completed' as any))
  })

  test('a payload over maxPayloadBytes keeps its first bytes, marked truncated', async ({
    assert,
  }) => {
    const { url, manager } = await eventsApp({
      watchers: [watchers.events({ maxPayloadBytes: 1000 })],
    })
    await fetch(`${url}/checkout/8`)
    const built = events(await lastBatch(manager)).find(
      (entry) => entry.summary === 'report:built'
    )!
    assert.isTrue(built.content.truncated)
    assert.deepEqual(built.tags, ['truncated'])
    // the string was cut at redact.maxStringLength (4096) first, then the JSON at 1000 bytes
    const redacted = JSON.stringify({ rows: `${'x'.repeat(4096)}…[904 more chars]` })
    assert.equal(built.content.payloadBytes, Buffer.byteLength(redacted))
    assert.typeOf(built.content.payload, 'string')
    assert.lengthOf(built.content.payload as string, 1000)
    assert.isTrue((built.content.payload as string).startsWith('{"rows":"xxx'))
  })

  test('include replaces the default filter, exclude always wins; payloads: false keeps names', async ({
    assert,
  }) => {
    const { url, manager } = await eventsApp({
      watchers: [
        watchers.events({
          include: ['session:*', /^order:/, 'OrderShipped'],
          exclude: [/shipped/i],
          payloads: false,
        }),
      ],
    })
    await fetch(`${url}/checkout/9`)
    const recorded = events(await lastBatch(manager))
    assert.deepEqual(
      recorded.map((entry) => entry.summary),
      ['order:placed', 'session:committed']
    )
    assert.deepEqual(recorded[0].content, { name: 'order:placed', classBased: false })
  })

  test('outside a request an event is its own batch, kept by sampling.event; a request’s follow it', async ({
    assert,
  }) => {
    const { url, manager, emitter } = await eventsApp({
      watchers: [watchers.events()],
      sampling: { event: 0 },
    })
    await emitter.emit('nightly:sampled-out' as any, { run: 1 })
    // the request's batch is kept by sampling.request (1), its events with it
    await fetch(`${url}/checkout/12`)
    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'event', limit: 10 })
    assert.deepEqual(
      data.map((entry) => entry.summary),
      ['report:built', 'audit:noise', 'OrderShipped', 'order:placed']
    )
  })

  test('an event emitted outside any request is an entry of its own batch', async ({ assert }) => {
    const { manager, emitter } = await eventsApp({ watchers: [watchers.events()] })
    await emitter.emit('nightly:report' as any, { run: 2 })
    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'event', limit: 5 })
    assert.deepEqual(
      data.map((entry) => entry.summary),
      ['nightly:report']
    )
    assert.equal(data[0].batchId, data[0].id)
  })

  test('GET /events lists event entries', async ({ assert }) => {
    const { url, manager, api } = await eventsApp({ watchers: [watchers.events()] })
    await fetch(`${url}/checkout/10`)
    await manager.recorder.flush()
    const response = await api('/events')
    assert.equal(response.status, 200)
    const body = (await response.json()) as any
    assert.deepEqual(
      body.data.map((entry: any) => entry.summary),
      ['report:built', 'audit:noise', 'OrderShipped', 'order:placed']
    )
    assert.notProperty(body.data[0], 'content')
  })

  test('without watchers.events() nothing is recorded, even beside an app that has it', async ({
    assert,
  }) => {
    // the watcher wraps its own app's emitter: another app in the process is not watched
    const watched = await eventsApp({ watchers: [watchers.events()] })
    const { url, manager } = await eventsApp({ watchers: [] })
    await fetch(`${url}/checkout/11`)
    const batch = await lastBatch(manager)
    assert.deepEqual(
      batch.map((entry) => entry.type),
      ['request']
    )
    await fetch(`${watched.url}/checkout/12`)
    assert.lengthOf(events(await lastBatch(watched.manager)), 4)
  })

  test('the options are checked at config time, naming the key', async ({ assert }) => {
    assert.throws(
      () => watchers.events({ include: ['ok', 42 as any] }),
      /Invalid "watchers.events.include" in config\/console.ts/
    )
    assert.throws(
      () => watchers.events({ maxPayloadBytes: 0 }),
      /Invalid "watchers.events.maxPayloadBytes"/
    )
    // `event` is built in now, and `events` is its list's route
    for (const type of ['event', 'events']) {
      assert.throws(
        () => defineConsoleExtension({ name: 'shop', entryTypes: [type] }),
        /is a built-in type or API route/
      )
    }
  })
})
