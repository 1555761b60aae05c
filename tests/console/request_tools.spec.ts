import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import { curlCommand, recordedRequest } from '../../src/console/http/request_tools.ts'
import { entryId } from '../../src/console/ids.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'

/** A console app whose mutations are allowed to callers sending `x-admin: yes` */
async function toolsApp() {
  const seen: Array<{ path: string; body: unknown; authorization?: string }> = []
  const app = await consoleApp({
    config: {
      authorizeAction: (ctx, action) =>
        ctx.request.header('x-admin') === 'yes' && action.name === 'replay a request',
    },
    routes: (router) => {
      router.post('/orders', (ctx) => {
        seen.push({
          path: ctx.request.url(true),
          body: ctx.request.body(),
          authorization: ctx.request.header('authorization'),
        })
        return ctx.response.created({ ok: true })
      })
      router.post('/signup', (ctx) => ({ email: ctx.request.input('email') }))
    },
  })
  /** The newest request entry recorded for `path`, after a flush */
  const recorded = async (path: string) => {
    await app.manager.recorder.flush()
    const page = await app.manager.store.list({ type: 'request', limit: 50 })
    const summary = page.data.find((entry) => entry.summary === `POST ${path}`)!
    return (await app.manager.store.find(summary.id))!
  }
  return { ...app, seen, recorded }
}

test.group('Console | copy as cURL and replay', () => {
  test('a recorded request copies as a cURL command without its redacted headers', async ({
    assert,
  }) => {
    const app = await toolsApp()
    await fetch(`${app.url}/orders?ref=7`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'authorization': 'Bearer live-secret' },
      body: JSON.stringify({ sku: "o'brien", qty: 2 }),
    })
    const entry = await app.recorded('/orders')
    const answer = await app.api(`/entries/${entry.id}/curl`)
    const { data } = (await answer.json()) as any
    assert.deepEqual(data.omittedHeaders, ['authorization'])
    assert.deepEqual(data.notes, ['redacted headers left out: authorization'])
    assert.include(data.command, `curl \\\n  -X POST \\\n  '${app.url}/orders?ref=7'`)
    assert.include(data.command, `-H 'content-type: application/json'`)
    assert.include(data.command, `--data-raw '{"sku":"o'\\''brien","qty":2}'`)
    assert.notInclude(data.command, 'live-secret')
    assert.notInclude(data.command, 'content-length')

    const missing = await app.api(`/entries/${entryId()}/curl`)
    assert.equal(missing.status, 404)
  })

  test('a replay needs authorizeAction, sends the request again and links its new batch', async ({
    assert,
  }) => {
    const app = await toolsApp()
    await fetch(`${app.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'authorization': 'Bearer live-secret' },
      body: JSON.stringify({ sku: 'A-1', qty: 2 }),
    })
    const entry = await app.recorded('/orders')
    const denied = await app.api(`/entries/${entry.id}/replay`, { method: 'POST' })
    assert.equal(denied.status, 403)
    assert.lengthOf(app.seen, 1)

    const replayed = await app.api(`/entries/${entry.id}/replay`, {
      method: 'POST',
      headers: { 'x-admin': 'yes' },
    })
    assert.equal(replayed.status, 200)
    const { data } = (await replayed.json()) as any
    assert.equal(data.status, 201)
    assert.equal(data.replayOf, entry.id)
    assert.deepEqual(data.omittedHeaders, ['authorization'])
    // sent again with its body, without the redacted credential
    assert.deepEqual(app.seen[1], {
      path: '/orders',
      body: { sku: 'A-1', qty: 2 },
      authorization: undefined,
    })

    const batch = await app.manager.store.batch(data.batchId)
    const request = batch.find((candidate: ConsoleEntry) => candidate.type === 'request')!
    assert.include(request.tags, 'replay')
    assert.equal(request.content.replayOf, entry.id)
    assert.notEqual(request.batchId, entry.batchId)
  })

  test('a replay header the console did not set marks nothing', async ({ assert }) => {
    const app = await toolsApp()
    const answer = await fetch(`${app.url}/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-atrium-console-replay': `forged.${entryId()}`,
      },
      body: '{}',
    })
    assert.isNull(answer.headers.get('x-atrium-console-batch'))
    const entry = await app.recorded('/orders')
    assert.notInclude(entry.tags, 'replay')
    assert.notProperty(entry.content, 'replayOf')
  })

  test('a form body is rebuilt in its own encoding; a body that was not recorded cannot be replayed', async ({
    assert,
  }) => {
    const form = recordedRequest({
      id: '01J0000000000000000000000000',
      batchId: '01J0000000000000000000000000',
      type: 'request',
      summary: 'POST /signup',
      status: 200,
      method: 'POST',
      durationMs: 1,
      slow: false,
      tags: [],
      createdAt: 0,
      content: {
        method: 'POST',
        path: '/signup',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'cookie': '[redacted]' },
        body: { email: 'a@b.c', password: '[redacted]' },
      },
    })
    assert.equal(form.body, 'email=a%40b.c&password=%5Bredacted%5D')
    assert.deepEqual(form.notes, [
      'redacted headers left out: cookie',
      'redacted body values are sent as "[redacted]"',
    ])
    assert.deepEqual(form.omittedHeaders, ['cookie'])
    assert.include(
      curlCommand(form, 'http://x'),
      `--data-raw 'email=a%40b.c&password=%5Bredacted%5D'`
    )

    const app = await toolsApp()
    await fetch(`${app.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from([1, 2, 3]),
    })
    const entry = await app.recorded('/orders')
    const refused = await app.api(`/entries/${entry.id}/replay`, {
      method: 'POST',
      headers: { 'x-admin': 'yes' },
    })
    assert.equal(refused.status, 409)
    assert.lengthOf(app.seen, 1)
  })
})
