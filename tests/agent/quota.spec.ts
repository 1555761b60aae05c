import { test } from '@japa/runner'
import { agentApp, bodyOf, deltasOf, runStatus } from './helpers.ts'

test.group('Agent daily quota', () => {
  test('a turn the budget cannot hold ends with event error quota_exceeded before any model call', async ({
    assert,
  }) => {
    // Each call holds 50 tokens while it runs; the fake bills 15 per call
    const app = await agentApp({ config: { quotaLimitTokens: 60, quotaReserveTokens: 50 } })
    app.fake.reply({ text: ['first'] }, { text: ['never'] })
    const first = await app.chat({ message: 'one' })
    assert.deepEqual(deltasOf(await first.sse.rest()), ['first'])
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 15 })

    const second = await app.chat({ message: 'two' })
    const frames = await second.sse.rest()
    assert.deepEqual(frames.at(-1), {
      id: String(frames.length),
      event: 'error',
      data: { code: 'quota_exceeded', message: 'The daily token quota is used up' },
    })
    assert.deepEqual(deltasOf(frames), [])
    assert.equal(app.fake.requests.length, 1)
    const runId = second.response.headers.get('x-agent-run-id')!
    assert.equal(await runStatus(app.manager, runId), 'failed')
    const run = await app.manager.config.store.findRun(runId)
    assert.equal(run?.errorCode, 'quota_exceeded')
    // No assistant text on a failed run, only the user's message
    const messages = await app.manager.config.store.listMessages(run!.threadId)
    assert.deepEqual(
      messages.map((message) => message.role),
      ['user']
    )
  })

  test('concurrent reservations never hold more than the budget: one conditional update each', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { quotaLimitTokens: 100 } })
    const store = app.manager.config.store
    const held = await Promise.all(
      Array.from({ length: 6 }, () => store.reserveQuota('carol', '2026-01-01', 40, 100))
    )
    assert.equal(held.filter(Boolean).length, 2)
    // Settling releases the hold and charges the real use
    await store.settleQuota('carol', '2026-01-01', 40, 7)
    assert.equal(await store.quotaUsed('carol', '2026-01-01'), 7)
    assert.isTrue(await store.reserveQuota('carol', '2026-01-01', 40, 100))
    assert.isFalse(await store.reserveQuota('carol', '2026-01-01', 40, 100))
    assert.equal(await store.quotaUsed('dave', '2026-01-01'), 0)
  })
})
