import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { defineConfig as transmitConfig } from '@adonisjs/transmit'
import { consoleApp, SECRET, sessionCookie } from './helpers.ts'
import { logEntry } from './entry_factories.ts'
import { SseReader } from '../sse_client.ts'
import { LIVE_TAIL_CHANNEL, type LiveTailMessage } from '../../src/console/live_tail.ts'

const TRANSMIT = () => import('@adonisjs/transmit/transmit_provider')

/** A console app with `@adonisjs/transmit` registered and a session gate */
async function liveApp() {
  return consoleApp({
    providers: [TRANSMIT],
    appConfig: { transmit: transmitConfig({ pingInterval: false, transport: null }) },
    config: { dashboardAuth: { secret: SECRET, session: () => ({ id: 'u1' }) } },
    routes: (router) => {
      router.get('/orders', () => ({ ok: true }))
      // what the app's own `transmit.registerRoutes()` asks before a subscription
      router.post('/may-subscribe', async (ctx) => {
        const transmit = await ctx.containerResolver.make('transmit')
        return { allowed: await transmit.getManager().verifyAccess(LIVE_TAIL_CHANNEL, ctx) }
      })
    },
  })
}

/** Opens the event stream of a new client uid and subscribes it to the live tail */
async function openTail(app: Awaited<ReturnType<typeof liveApp>>) {
  const base = '/console/api/live'
  const uid = randomUUID()
  const headers = { cookie: sessionCookie() }
  const stream = await fetch(`${app.url}${base}/__transmit/events?uid=${uid}`, { headers })
  const reader = new SseReader(stream)
  // the stream's opening comment: the uid is known to the server from here on
  await reader.until((frame) => frame.comment !== undefined, { comments: true })
  const subscribe = (channel = LIVE_TAIL_CHANNEL, cookie: string | null = headers.cookie) =>
    fetch(`${app.url}${base}/__transmit/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: JSON.stringify({ uid, channel }),
    })
  /** The next live-tail message on the stream */
  const next = async (): Promise<LiveTailMessage> => {
    const [frame] = await reader.until((candidate) => candidate.data !== undefined)
    assertChannel(frame.data)
    return frame.data.payload
  }
  return { uid, stream, reader, subscribe, next }
}

function assertChannel(data: any) {
  if (data?.channel !== LIVE_TAIL_CHANNEL) {
    throw new Error(`a message on another channel: ${JSON.stringify(data)}`)
  }
}

test.group('Console | live tail', () => {
  test('a signed-in dashboard gets each new request as a summary, without its content', async ({
    assert,
    cleanup,
  }) => {
    const app = await liveApp()
    const tail = await openTail(app)
    cleanup(() => tail.reader.cancel())
    const subscribed = await tail.subscribe()
    assert.equal(subscribed.status, 204)

    const live = await fetch(`${app.url}/console/api/live`, {
      headers: { cookie: sessionCookie() },
    })
    assert.deepEqual(await live.json(), { data: { channel: LIVE_TAIL_CHANNEL } })

    await fetch(`${app.url}/orders?token=secret-value`, { headers: { authorization: 'Bearer x' } })
    await app.manager.recorder.flush()
    const message = await tail.next()
    const request = message.entries.find((summary) => summary.type === 'request')!
    assert.isTrue(request.summary.startsWith('GET /orders'))
    assert.equal(request.status, 200)
    assert.notProperty(request, 'content')
    assert.equal(message.skipped, 0)
    // what the tail shows is stored: a click opens it
    const stored = await fetch(`${app.url}/console/api/entries/${request.id}`, {
      headers: { cookie: sessionCookie() },
    })
    assert.equal(stored.status, 200)
  })

  test('subscribing needs the console session, and only the live-tail channel is offered', async ({
    assert,
    cleanup,
  }) => {
    const app = await liveApp()
    const tail = await openTail(app)
    cleanup(() => tail.reader.cancel())
    const signedOut = await tail.subscribe(LIVE_TAIL_CHANNEL, null)
    assert.equal(signedOut.status, 401)
    const other = await tail.subscribe('orders/1')
    assert.equal(other.status, 400)
    const refusal = (await other.json()) as {
      errors: Array<{ message: string; parameter: string }>
    }
    assert.include(refusal.errors[0].message, LIVE_TAIL_CHANNEL)
    assert.equal(refusal.errors[0].parameter, 'channel')
    const noStream = await fetch(`${app.url}/console/api/live/__transmit/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cookie': sessionCookie() },
      body: JSON.stringify({ uid: randomUUID(), channel: LIVE_TAIL_CHANNEL }),
    })
    assert.equal(noStream.status, 400)
    const events = await fetch(`${app.url}/console/api/live/__transmit/events?uid=${randomUUID()}`)
    assert.equal(events.status, 401)
  })

  test('the channel is refused to a visitor the console would refuse, whichever route subscribes', async ({
    assert,
  }) => {
    const app = await liveApp()
    const allowed = async (cookie?: string) => {
      const answer = await fetch(`${app.url}/may-subscribe`, {
        method: 'POST',
        headers: cookie ? { cookie } : {},
      })
      const body = (await answer.json()) as { allowed: boolean }
      return body.allowed
    }
    assert.isFalse(await allowed())
    assert.isFalse(await allowed(sessionCookie({ expOffset: -3600 })))
    assert.isTrue(await allowed(sessionCookie()))
  })

  test('a flush past the cap sends its newest summaries and counts the rest; nothing while paused', async ({
    assert,
    cleanup,
  }) => {
    const app = await liveApp()
    const tail = await openTail(app)
    cleanup(() => tail.reader.cancel())
    await tail.subscribe()
    const liveTail = app.manager.liveTail!
    const entries = Array.from({ length: 150 }, (_, index) => logEntry(Date.now(), `line ${index}`))

    app.manager.recorder.paused = true
    liveTail.publish([logEntry(Date.now(), 'while paused')])
    app.manager.recorder.paused = false
    liveTail.publish(entries)

    // the paused one would have arrived first
    const message = await tail.next()
    assert.lengthOf(message.entries, 100)
    assert.equal(message.skipped, 50)
    assert.equal(message.entries[0].summary, 'line 50')
    assert.equal(message.entries[99].summary, 'line 149')
  })

  test('without @adonisjs/transmit, or with ui.liveTail off, there is no tail and no route', async ({
    assert,
  }) => {
    const plain = await consoleApp()
    assert.isUndefined(plain.manager.liveTail)
    const plainLive = await plain.api('/live')
    assert.equal(plainLive.status, 404)

    const off = await consoleApp({
      providers: [TRANSMIT],
      appConfig: { transmit: transmitConfig({ pingInterval: false, transport: null }) },
      config: { ui: { liveTail: false } },
    })
    assert.isUndefined(off.manager.liveTail)
    const offLive = await off.api('/live')
    assert.equal(offLive.status, 404)
  })
})
