import { test } from '@japa/runner'
import { createServer, get as httpGet, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { consoleApp } from './helpers.ts'
import { watchers } from '../../src/console/main.ts'
import { publishDiagnostic } from '../../src/shared/diagnostics.ts'

/** A loopback server answering `/ok` 200 with a cookie and anything else 404 */
async function loopback() {
  const server: Server = createServer((request, response) => {
    response.setHeader('set-cookie', 'session=remote-secret')
    response.statusCode = request.url?.startsWith('/ok') ? 200 : 404
    response.end('done')
  })
  server.on('error', () => {})
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { origin: `http://127.0.0.1:${port}`, close: () => server.close() }
}

function nodeGet(url: string, headers: Record<string, string>) {
  return new Promise<number>((resolve, reject) => {
    const request = httpGet(url, { headers }, (response) => {
      response.resume()
      response.on('end', () => resolve(response.statusCode!))
    })
    request.on('error', reject)
  })
}

test.group('Console watchers: outgoing HTTP and Atrium features', () => {
  test('fetch and node:http calls join their request batch, redacted', async ({
    assert,
    cleanup,
  }) => {
    const remote = await loopback()
    cleanup(() => {
      remote.close()
    })
    const { url, manager } = await consoleApp({
      config: { watchers: [watchers.http()], buffer: { flushIntervalMs: 60_000 } },
      routes(router) {
        router.get('/call', async () => {
          const first = await fetch(`${remote.origin}/ok?token=query-secret&page=2`, {
            headers: { 'authorization': 'Bearer outgoing-secret', 'x-trace': 't1' },
          })
          await first.text()
          const second = await nodeGet(`${remote.origin}/missing?api_key=k1`, {
            'x-api-key': 'node-secret',
          })
          return { first: first.status, second }
        })
      },
    })
    const response = await fetch(`${url}/call`)
    assert.deepEqual(await response.json(), { first: 200, second: 404 })
    await manager.recorder.flush()

    const { data: requests } = await manager.store.list({ type: 'request', limit: 5 })
    const batch = await manager.store.batch(requests[0].batchId)
    const calls = batch.filter((entry) => entry.type === 'http')
    assert.lengthOf(calls, 2)
    const [viaFetch, viaNode] = calls
    assert.equal(viaFetch.content.client, 'fetch')
    assert.equal(viaFetch.status, 200)
    assert.equal(viaFetch.content.url, `${remote.origin}/ok?token=%5Bredacted%5D&page=2`)
    assert.equal((viaFetch.content.requestHeaders as any).authorization, '[redacted]')
    assert.equal((viaFetch.content.requestHeaders as any)['x-trace'], 't1')
    assert.equal((viaFetch.content.responseHeaders as any)['set-cookie'], '[redacted]')
    assert.equal(viaNode.content.client, 'http')
    assert.equal(viaNode.status, 404)
    assert.equal(viaNode.method, 'GET')
    assert.include(String(viaNode.content.url), '/missing?api_key=%5Bredacted%5D')
    assert.equal((viaNode.content.requestHeaders as any)['x-api-key'], '[redacted]')

    // the test's own fetch of /call runs in this process too: only the remote's calls count
    const listed = await fetch(`${url}/console/api/http`)
    const { data } = (await listed.json()) as any
    assert.lengthOf(
      data.filter((entry: any) => entry.summary.includes(remote.origin)),
      2
    )
    const stored = JSON.stringify(calls)
    // no secret is a hex word: entry ids are hex and could contain one by chance
    for (const secret of [
      'query-secret',
      'outgoing-secret',
      'node-secret',
      'remote-secret',
      'k1',
    ]) {
      assert.notInclude(stored, secret)
    }
  })

  test('a call that cannot connect is recorded with its error', async ({ assert }) => {
    const remote = await loopback()
    const closedOrigin = remote.origin
    remote.close()
    const { url, manager } = await consoleApp({
      config: { watchers: [watchers.http()], buffer: { flushIntervalMs: 60_000 } },
      routes(router) {
        router.get('/refused', async () => {
          const outcome = await fetch(`${closedOrigin}/ok`).then(
            () => 'answered',
            () => 'failed'
          )
          return { outcome }
        })
      },
    })
    const response = await fetch(`${url}/refused`)
    assert.deepEqual(await response.json(), { outcome: 'failed' })
    await manager.recorder.flush()
    const listed = await manager.store.list({ type: 'http', limit: 5 })
    const data = listed.data.filter((entry) => entry.summary.includes(closedOrigin))
    assert.lengthOf(data, 1)
    assert.isNull(data[0].status)
    assert.include(data[0].tags, 'error')
    const entry = await manager.store.find(data[0].id)
    assert.match(String(entry?.content.error), /ECONNREFUSED|connect/i)
  })

  test('payment webhook events on the atrium:payments channels become feature entries, redacted', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({
      config: { watchers: [watchers.features()], buffer: { flushIntervalMs: 60_000 } },
    })
    publishDiagnostic(
      'payments',
      'webhook.failed',
      { eventId: 'evt_1', provider: 'stripe', type: 'payment.succeeded', error: 'no order' },
      'trace-1'
    )
    publishDiagnostic(
      'payments',
      'payment.succeeded',
      { eventId: 'evt_1', provider: 'stripe', amount: 2590, card_number: '4242424242424242' },
      'trace-1'
    )
    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'feature', limit: 5 })
    assert.deepEqual(
      data.map((entry) => entry.summary),
      ['payments payment.succeeded stripe evt_1', 'payments webhook.failed stripe evt_1']
    )
    assert.include(data[1].tags, 'error')
    const succeeded = await manager.store.find(data[0].id)
    assert.equal(succeeded?.content.traceId, 'trace-1')
    assert.deepInclude(succeeded?.content.payload as object, {
      amount: 2590,
      card_number: '[redacted]',
    })
  })

  test('collaboration connections and failures on the atrium:collaboration channels become feature entries', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({
      config: { watchers: [watchers.features()], buffer: { flushIntervalMs: 60_000 } },
    })
    const { reportCollaborationError } = await import('../../src/collaboration/observability.ts')
    publishDiagnostic('collaboration', 'connection.opened', {
      docName: 'notes/1',
      connectionId: '7',
      userId: 'u1',
      canWrite: true,
    })
    reportCollaborationError({
      scope: 'storage',
      operation: 'appendUpdate',
      docName: 'notes/1',
      error: new Error('disk full'),
    })
    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'feature', limit: 5 })
    assert.deepEqual(
      data.map((entry) => entry.summary),
      ['collaboration storage.failed notes/1', 'collaboration connection.opened notes/1']
    )
    assert.include(data[0].tags, 'error')
    const failed = await manager.store.find(data[0].id)
    assert.deepInclude(failed?.content.payload as object, {
      operation: 'appendUpdate',
      message: 'disk full',
    })
  })

  test('agent runs on the atrium:agent channels become feature entries, a failed run tagged error', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({
      config: { watchers: [watchers.features()], buffer: { flushIntervalMs: 60_000 } },
    })
    publishDiagnostic(
      'agent',
      'run.finished',
      {
        runId: 'run_1',
        threadId: 'th_1',
        agentName: 'support',
        status: 'failed',
        errorCode: 'model_error',
        steps: 1,
      },
      'run_1'
    )
    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'feature', limit: 5 })
    assert.deepEqual(
      data.map((entry) => entry.summary),
      ['agent run.finished support']
    )
    assert.include(data[0].tags, 'error')
  })

  test('without the watchers nothing is recorded from these sources', async ({ assert }) => {
    const { manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    publishDiagnostic('payments', 'webhook.received', { eventId: 'evt_2', provider: 'stripe' })
    await fetch(`http://127.0.0.1:1/`).catch(() => null)
    await manager.recorder.flush()
    const features = await manager.store.list({ type: 'feature', limit: 5 })
    const calls = await manager.store.list({ type: 'http', limit: 5 })
    assert.lengthOf(features.data, 0)
    assert.lengthOf(calls.data, 0)
  })
})
