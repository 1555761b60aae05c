import { test } from '@japa/runner'
import type { Router } from '@adonisjs/core/http'
import { consoleApp } from './helpers.ts'
import { defineConfig, parseTraceparent, watchers } from '../../src/console/main.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const SPAN_ID = '00f067aa0ba902b7'
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`

function routes(router: Router) {
  router.get('/orders', async (ctx) => {
    const db = await ctx.containerResolver.make('lucid.db')
    await db.rawQuery('select ? as marker', ['traced'])
    return { orders: [] }
  })
  router.get('/broken', async () => {
    throw new Error('inventory service down')
  })
}

async function tracedApp(config: ConsoleConfig) {
  const app = await consoleApp({
    config: { watchers: [watchers.queries()], buffer: { flushIntervalMs: 60_000 }, ...config },
    routes,
  })
  const json = async (path: string) => {
    const response = await app.api(path)
    if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
    return (await response.json()) as any
  }
  /** The entries of the batch of the newest request */
  const newestBatch = async () => {
    await app.manager.recorder.flush()
    const { data: requests } = await json('/requests?limit=1')
    const { data: batch } = await json(`/batches/${requests[0].batchId}`)
    return batch.entries as any[]
  }
  return { ...app, json, newestBatch }
}

test.group('Console trace context', () => {
  test('every entry of a request batch carries the traceparent ids, with the traceLink URL', async ({
    assert,
  }) => {
    const { url, json, newestBatch } = await tracedApp({
      traceContext: true,
      traceLink: 'https://tempo.example.com/trace/{traceId}?span={spanId}',
    })
    const response = await fetch(`${url}/orders`, { headers: { traceparent: TRACEPARENT } })
    assert.equal(response.status, 200)

    const entries = await newestBatch()
    assert.deepEqual(
      entries.map((entry) => entry.type),
      ['request', 'query']
    )
    const link = `https://tempo.example.com/trace/${TRACE_ID}?span=${SPAN_ID}`
    for (const entry of entries) {
      assert.deepEqual(entry.content.trace, { traceId: TRACE_ID, spanId: SPAN_ID, sampled: true })
      assert.deepEqual(entry.trace, {
        traceId: TRACE_ID,
        spanId: SPAN_ID,
        sampled: true,
        url: link,
      })
    }
    const { data: entry } = await json(`/entries/${entries[1].id}`)
    assert.equal(entry.trace.url, link)
  })

  test('the exception a traced request raised shares its trace', async ({ assert }) => {
    const { url, newestBatch } = await tracedApp({ traceContext: true })
    const response = await fetch(`${url}/broken`, {
      headers: { traceparent: `00-${TRACE_ID}-${SPAN_ID}-00` },
    })
    assert.equal(response.status, 500)

    const entries = await newestBatch()
    const exception = entries.find((entry) => entry.type === 'exception')
    assert.equal(exception.content.trace.traceId, TRACE_ID)
    assert.isFalse(exception.content.trace.sampled)
    // no traceLink: the ids without a URL
    assert.isNull(exception.trace.url)
  })

  test('a malformed traceparent is ignored and never fails the request', async ({ assert }) => {
    const { url, newestBatch } = await tracedApp({ traceContext: true })
    const malformed = [
      `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`,
      `00-${'0'.repeat(32)}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
      `ff-${TRACE_ID}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${SPAN_ID}-01-extra`,
      `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`,
      `00-${TRACE_ID}-${SPAN_ID}`,
      `0g-${TRACE_ID}-${SPAN_ID}-01`,
      `cc-${TRACE_ID}-${SPAN_ID}-01${'-x'.repeat(300)}`,
      'not a traceparent',
    ]
    for (const value of malformed) {
      const response = await fetch(`${url}/orders`, { headers: { traceparent: value } })
      assert.equal(response.status, 200, value)
      const entries = await newestBatch()
      assert.notProperty(entries[0].content, 'trace', value)
      assert.notProperty(entries[0], 'trace', value)
    }

    // two traceparent headers arrive joined by a comma: which one is the caller's is unknown
    const headers = new Headers()
    headers.append('traceparent', TRACEPARENT)
    headers.append('traceparent', `00-${'a'.repeat(32)}-${SPAN_ID}-01`)
    const joined = await fetch(`${url}/orders`, { headers })
    assert.equal(joined.status, 200)
    const [request] = await newestBatch()
    assert.notProperty(request.content, 'trace')
  })

  test('a later traceparent version is read by its first four fields', ({ assert }) => {
    assert.deepEqual(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-03-future-field`), {
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      sampled: true,
    })
    assert.isNull(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-03future`))
    assert.isNull(parseTraceparent(undefined))
  })

  test('a traceContext function supplies the ids; malformed ones and a throw are ignored', async ({
    assert,
  }) => {
    const { url, newestBatch } = await tracedApp({
      traceContext: (ctx) => {
        const id = ctx.request.header('x-request-trace')
        if (id === 'explode') throw new Error('tracer not ready')
        return { traceId: id ?? '', spanId: 'not-a-span' }
      },
      traceLink: 'https://ui.honeycomb.io/acme/trace?trace_id={traceId}',
    })
    await fetch(`${url}/orders`, { headers: { 'x-request-trace': TRACE_ID.toUpperCase() } })
    const [request] = await newestBatch()
    assert.deepEqual(request.trace, {
      traceId: TRACE_ID,
      spanId: null,
      url: `https://ui.honeycomb.io/acme/trace?trace_id=${TRACE_ID}`,
    })

    const thrown = await fetch(`${url}/orders`, { headers: { 'x-request-trace': 'explode' } })
    assert.equal(thrown.status, 200)
    const [afterThrow] = await newestBatch()
    assert.notProperty(afterThrow.content, 'trace')

    await fetch(`${url}/orders`, { headers: { 'x-request-trace': 'short' } })
    const [afterShort] = await newestBatch()
    assert.notProperty(afterShort.content, 'trace')
  })

  test('without traceContext a traceparent is not read', async ({ assert }) => {
    const { url, newestBatch } = await tracedApp({})
    await fetch(`${url}/orders`, { headers: { traceparent: TRACEPARENT } })
    const [request] = await newestBatch()
    assert.notProperty(request.content, 'trace')
  })

  test('defineConfig refuses a traceLink without {traceId} or not http(s), and a bad traceContext', ({
    assert,
  }) => {
    assert.throws(
      () => defineConfig({ traceLink: 'https://tempo.example.com/trace/' }),
      /Invalid "traceLink" in config\/console.ts: use a URL template holding \{traceId\}/
    )
    assert.throws(
      () => defineConfig({ traceLink: 'javascript:alert({traceId})' }),
      /Invalid "traceLink" in config\/console.ts: use an http\(s\) URL template/
    )
    assert.throws(
      () => defineConfig({ traceContext: 'traceparent' as any }),
      /Invalid "traceContext" in config\/console.ts/
    )
  })
})
