import { test } from '@japa/runner'
import type { HttpContext } from '@adonisjs/core/http'
import { ALICE, agentApp, deltasOf, errorOf } from '../agent/helpers.ts'
import { AGENT_TABLES, json } from '../../src/agent/store/lucid_rows.ts'

const ADMIN = { 'x-admin': 'yes', 'content-type': 'application/json' }

/** An agent app with the governance API open to `x-admin: yes`, and one finished turn */
async function hostileApp() {
  const app = await agentApp({
    config: {
      dashboard: { authorize: (ctx: HttpContext) => ctx.request.header('x-admin') === 'yes' },
    },
  })
  const { response, sse } = await app.chat({ message: 'hello' }, ALICE)
  await sse.rest()
  const governance = (path: string, init: RequestInit = {}) =>
    fetch(`${app.url}/ai-gateway/api${path}`, { ...init, headers: ADMIN })
  return {
    ...app,
    governance,
    runId: response.headers.get('x-agent-run-id')!,
    threadId: response.headers.get('x-agent-thread-id')!,
  }
}

test.group('Hostile | agent gateway HTTP', () => {
  test('a NUL character in a stored or compared string is a 400 naming the field, never a 500', async ({
    assert,
  }) => {
    const app = await hostileApp()
    const refusals: Array<[Promise<Response>, string]> = [
      [app.request('POST', '/chat', ALICE, { message: 'a\u0000b' }), 'message'],
      [app.request('PATCH', `/threads/${app.threadId}`, ALICE, { title: 'a\u0000' }), 'title'],
      [app.request('POST', '/tool-call/approve', ALICE, { toolCallId: 'a\u0000' }), 'toolCallId'],
      [
        app.request('POST', '/tool-call/reject', ALICE, { toolCallId: 'a', reason: '\u0000' }),
        'reason',
      ],
      [app.governance('/runs-page?where[agentName]=%00'), 'where[agentName]'],
      [app.governance('/threads-page?where[title]=a%00'), 'where[title]'],
      [app.governance('/tool-calls-page?where[threadId]=%00'), 'where[threadId]'],
      [
        app.governance('/approvals/a', {
          method: 'POST',
          body: JSON.stringify({ approved: false, reason: 'a\u0000' }),
        }),
        'reason',
      ],
      [
        app.governance('/pricing', {
          method: 'POST',
          body: JSON.stringify({ modelId: 'm\u0000', inputPricePer1m: '1', outputPricePer1m: '1' }),
        }),
        'modelId',
      ],
    ]
    for (const [pending, field] of refusals) {
      const response = await pending
      assert.equal(response.status, 400, field)
      assert.deepInclude(await errorOf(response), {
        code: 'E_AGENT_INVALID_REQUEST',
        message: `"${field}" must not contain a NUL character`,
        field,
      })
    }
    const unknown = await app.governance('/approvals/a%00', {
      method: 'POST',
      body: JSON.stringify({ approved: true }),
    })
    assert.equal(unknown.status, 404)

    const thread = await app.request('GET', `/threads/${app.threadId}`)
    assert.equal(((await thread.json()) as { title: string }).title, 'hello')
    const prices = await app.governance('/pricing')
    assert.deepEqual(await prices.json(), [])
  })

  test('a NUL in the model answer is stored as U+FFFD and the run ends done, on every database', async ({
    assert,
  }) => {
    const app = await agentApp()
    app.fake.reply({ text: ['hel', 'lo\u0000there'] })
    const { response, sse } = await app.chat({ message: 'hello' }, ALICE)
    const frames = await sse.rest()
    // the stream relays what the model sent; only the stored copy changes
    assert.deepEqual(deltasOf(frames), ['hel', 'lo\u0000there'])
    assert.equal(frames.at(-1)?.event, 'done')

    const threadId = response.headers.get('x-agent-thread-id')!
    const stored = await app.request('GET', `/threads/${threadId}`)
    const detail = (await stored.json()) as {
      messages: Array<{ role: string; content: string }>
    }
    assert.deepEqual(
      detail.messages.map((message) => [message.role, message.content]),
      [
        ['user', 'hello'],
        ['assistant', 'hello\ufffdthere'],
      ]
    )
    const run = await app.db
      .from(AGENT_TABLES.runs)
      .where('id', response.headers.get('x-agent-run-id')!)
      .first()
    assert.equal(run.status, 'done')
  })

  test('JSON columns keep a NUL as the \\ufffd escape, and an escaped backslash before u0000 as it is', ({
    assert,
  }) => {
    assert.equal(json({ a: 'x\u0000' }), '{"a":"x\\ufffd"}')
    assert.equal(json({ a: '\\u0000' }), '{"a":"\\\\u0000"}')
    assert.equal(JSON.parse(json(['\\\u0000'])!)[0], '\\\ufffd')
  })

  test('a repeated or bracketed ?after= is a 400, not a replay from the start', async ({
    assert,
  }) => {
    const app = await hostileApp()
    for (const query of ['after=1&after=2', 'after[]=1', 'after[x]=1']) {
      const response = await app.request('GET', `/chat/${app.runId}/stream?${query}`)
      const error = await errorOf(response)
      assert.equal(response.status, 400, query)
      assert.equal(error.field, 'after', query)
    }
  })

  test('a day window reaching past the year 9999 or before 0000 is a 400 naming the day given', async ({
    assert,
  }) => {
    const app = await hostileApp()
    for (const [query, field] of [
      ['from=9999-12-31', 'from'],
      ['to=0000-01-01', 'to'],
    ]) {
      for (const route of ['/spend', '/top-threads', '/reliability', '/tools']) {
        const response = await app.governance(`${route}?${query}`)
        const error = await errorOf(response)
        assert.equal(response.status, 400, `${route}?${query}`)
        assert.equal(error.field, field, `${route}?${query}`)
      }
    }
    const edge = await app.governance('/spend?from=0000-01-01&to=0000-01-30')
    assert.equal(edge.status, 200)
  })
})
