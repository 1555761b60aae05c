import { test } from '@japa/runner'
import { bodyOf, deltasOf, runStatus } from './helpers.ts'
import { insightApp, runOf } from './insight_helpers.ts'

/** An error answer the provider asks to retry at once */
function failure(status: number) {
  return { status, errorMessage: `fake ${status}`, headers: { 'retry-after-ms': '1' } }
}

/** Resolves once `condition` holds, checking every few milliseconds */
async function until(condition: () => boolean) {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}

test.group('Agent model call retries', () => {
  test('a 429 and a 500 before any delta are retried by the gateway, counted on the run and in /reliability', async ({
    assert,
  }) => {
    const app = await insightApp({
      config: { modelMaxRetries: 2, quotaLimitTokens: 1000, quotaReserveTokens: 100 },
    })
    app.fake.reply(failure(429), failure(500), { text: ['ok'] })
    const { runId } = await app.turn('hello')
    assert.equal(app.fake.requests.length, 3)
    const run = await app.manager.config.store.findRun(runId)
    assert.equal(run?.status, 'done')
    assert.equal(run?.retries, 2)
    const messages = await app.manager.config.store.listMessages(run!.threadId)
    assert.deepEqual(
      messages.map((message) => [message.role, message.content]),
      [
        ['user', 'hello'],
        ['assistant', 'ok'],
      ]
    )
    // One hold for the three attempts, charged what the answered one used
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 15 })
    // One usage row: the failed attempts reached no model
    assert.lengthOf(await app.usageOf(runId), 1)

    app.fake.reply(failure(503), { text: ['again'] })
    await app.turn('once more')
    const { status, body } = await app.json('/reliability')
    assert.equal(status, 200)
    assert.equal(body.metrics.retries, 3)
    assert.equal(body.metrics.succeeded, 2)
  })

  test('/reliability breaks the retries down per agent; an agent that retried nothing shows 0', async ({
    assert,
  }) => {
    const app = await insightApp({ config: { modelMaxRetries: 2 } })
    app.fake.reply(failure(429), failure(500), { text: ['ok'] })
    await app.turn('hello')
    const store = app.manager.config.store
    const end = async (agentName: string, retries: number) => {
      const { runId } = await runOf(store, agentName)
      await store.finishRun(runId, { status: 'done', steps: 1, model: 'm', retries })
    }
    await end('writer', 3)
    await end('writer', 1)
    await end('reader', 0)

    const { status, body } = await app.json('/reliability')
    assert.equal(status, 200)
    assert.equal(body.metrics.retries, 6)
    assert.deepEqual(
      body.byAgent.map((row: any) => [row.agentName, row.runs, row.retries]),
      [
        ['writer', 2, 4],
        ['default', 1, 2],
        ['reader', 1, 0],
      ]
    )
  })

  test('retries stop at modelMaxRetries, a 400 is never retried, and neither is a call that streamed', async ({
    assert,
  }) => {
    const app = await insightApp({ config: { modelMaxRetries: 1 } })
    app.fake.reply(failure(500), failure(500))
    const first = await app.turn('one')
    assert.equal(app.fake.requests.length, 2)
    assert.equal(await runStatus(app.manager, first.runId), 'failed')
    const firstRun = await app.manager.config.store.findRun(first.runId)
    assert.equal(firstRun?.retries, 1)

    app.fake.reply(failure(400))
    const second = await app.turn('two')
    assert.equal(app.fake.requests.length, 3)
    const secondRun = await app.manager.config.store.findRun(second.runId)
    assert.equal(secondRun?.retries, 0)

    // The reader saw "a", then the connection is cut: sending the call again would repeat it
    app.fake.reply({ text: ['a', 'b', 'c'], stallAfter: 1, cutAfter: 2 })
    const { response, sse } = await app.chat({ message: 'three' })
    const seen = await sse.until((frame) => frame.data?.delta === 'a')
    assert.deepEqual(deltasOf(seen), ['a'])
    app.fake.release()
    const frames = await sse.rest()
    assert.equal(frames.at(-1)?.data.code, 'run_failed')
    assert.notInclude(deltasOf(frames), 'ok')
    assert.equal(app.fake.requests.length, 4)
    const third = await app.manager.config.store.findRun(response.headers.get('x-agent-run-id')!)
    assert.equal(third?.retries, 0)

    const { body } = await app.json('/reliability')
    assert.equal(body.metrics.retries, 1)
  })

  test('a cancel while the gateway waits to retry ends the run without another call', async ({
    assert,
  }) => {
    const app = await insightApp({ config: { modelMaxRetries: 2 } })
    // Retry-After of 50 s: the run would wait that long if the wait ignored the cancel
    app.fake.reply({ status: 429, errorMessage: 'slow down', headers: { 'retry-after': '50' } })
    const { response, sse } = await app.chat({ message: 'hello' })
    const runId = response.headers.get('x-agent-run-id')!
    await until(() => app.fake.requests.length === 1)
    const cancelled = await app.request('POST', `/chat/${runId}/cancel`)
    assert.deepEqual(await bodyOf(cancelled), { aborted: true })
    const frames = await sse.rest()
    assert.deepEqual(frames.at(-1)?.data, { aborted: true })
    assert.equal(await runStatus(app.manager, runId), 'aborted')
    assert.equal(app.fake.requests.length, 1)
  })
})
