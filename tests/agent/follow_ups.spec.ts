import { test } from '@japa/runner'
import { defineConfig } from '../../src/agent/main.ts'
import { FOLLOW_UPS_SYSTEM, parseFollowUps } from '../../src/agent/follow_ups.ts'
import { actors } from '../../src/agent/define_config.ts'
import { agentApp, bodyOf, deltasOf } from './helpers.ts'

type App = Awaited<ReturnType<typeof agentApp>>

/** A finished turn: its frames, ids and the stored assistant answer */
async function turn(app: App, body: Record<string, unknown>) {
  const { response, sse } = await app.chat(body)
  const frames = await sse.rest()
  const threadId = response.headers.get('x-agent-thread-id')!
  const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
  return {
    frames,
    threadId,
    runId: response.headers.get('x-agent-run-id')!,
    answer: detail.messages.at(-1),
  }
}

test.group('Agent follow-up questions', () => {
  test('followUps: true makes one extra call, stores three questions on the answer and prices a follow_ups usage row', async ({
    assert,
  }) => {
    const app = await agentApp({
      config: {
        followUps: true,
        pricing: { 'fake-model': { inputPricePer1m: 1, outputPricePer1m: 2 } },
      },
    })
    app.fake.reply(
      { text: ['Paris', '.'] },
      {
        text: ['["What about Lyon?", "How big', ' is Paris?", "When to visit?", "A fourth?"]'],
        usage: { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 },
      }
    )
    const { frames, runId, answer } = await turn(app, { message: 'Capital of France?' })
    const questions = ['What about Lyon?', 'How big is Paris?', 'When to visit?']
    // The questions reach the client on the closing frame, never as answer text
    assert.deepEqual(deltasOf(frames), ['Paris', '.'])
    assert.deepEqual(frames.at(-1), {
      id: frames.at(-1)!.id,
      event: 'done',
      data: { followUps: questions },
    })
    assert.include(answer, { role: 'assistant', content: 'Paris.', runId })
    assert.deepEqual(answer.followUps, questions)

    // The extra call: its own instructions, no tools, the conversation and a closing user turn
    assert.lengthOf(app.fake.requests, 2)
    const sent = app.fake.requests[1].body
    assert.isUndefined(sent.tools)
    assert.deepEqual(sent.messages.slice(0, 3), [
      { role: 'system', content: FOLLOW_UPS_SYSTEM },
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris.' },
    ])
    assert.equal(sent.messages[3].role, 'user')
    assert.include(sent.messages[3].content, 'Propose 3 follow-up questions')

    const usage = await app.manager.config.store.listUsage(runId)
    assert.deepEqual(
      usage.map((row) => [row.kind, row.step, row.uncachedInputTokens, row.outputTokens]),
      [
        ['step', 1, 10, 5],
        ['follow_ups', 2, 40, 20],
      ]
    )
    // Priced like any call: 40 input at 1 and 20 output at 2 per million tokens = 80 micro-units
    assert.deepEqual([usage[1].costSource, usage[1].cost], ['estimated', 80])
    const [rollup] = await app.db.from('agent_rollups').sum('model_calls as calls')
    assert.equal(Number(rollup.calls), 2)
    const run = await app.manager.config.store.findRun(runId)
    assert.include(run, { status: 'done', steps: 1 })
  })

  test('{ count } keeps that many questions from a list answer, and a transient thread keeps them through promote', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { followUps: { count: 2 } } })
    app.fake.reply({ text: ['Yes.'] }, { text: ['1. First?\n2. Second?\n3. Third?'] })
    const { frames, threadId, answer } = await turn(app, { message: 'Ok?', transient: true })
    assert.deepEqual(frames.at(-1)?.data, { followUps: ['First?', 'Second?'] })
    assert.deepEqual(answer.followUps, ['First?', 'Second?'])
    assert.include(app.fake.requests[1].body.messages.at(-1).content, 'Propose 2 follow-up')

    const promoted = await app.request('POST', `/threads/${threadId}/promote`)
    assert.deepEqual(await bodyOf(promoted), { ok: true })
    const [stored] = await app.db
      .from('agent_messages')
      .where('thread_id', threadId)
      .where('role', 'assistant')
    assert.deepEqual(JSON.parse(stored.follow_ups), ['First?', 'Second?'])
  })

  test('a failed follow-up call or a quota that cannot hold it leaves the answer done with no questions', async ({
    assert,
  }) => {
    const failing = await agentApp({ config: { followUps: true } })
    failing.fake.reply({ text: ['Answer.'] }, { text: ['["never'], cutAfter: 0 })
    const failed = await turn(failing, { message: 'Hi' })
    assert.deepEqual(failed.frames.at(-1), {
      id: failed.frames.at(-1)!.id,
      event: 'done',
      data: { followUps: [] },
    })
    assert.deepEqual(failed.answer.followUps, [])
    const failedUsage = await failing.manager.config.store.listUsage(failed.runId)
    assert.deepEqual(
      failedUsage.map((row) => [row.kind, row.known]),
      [
        ['step', true],
        ['follow_ups', false],
      ]
    )

    // The answer used 15 of 8 206 tokens: 8 191 left cannot hold the follow-up's 8 192
    const limited = await agentApp({ config: { followUps: true, quotaLimitTokens: 8206 } })
    limited.fake.reply({ text: ['Answer.'] })
    const refused = await turn(limited, { message: 'Hi' })
    assert.deepEqual(refused.frames.at(-1)?.data, { followUps: [] })
    assert.lengthOf(limited.fake.requests, 1)
    const run = await limited.manager.config.store.findRun(refused.runId)
    assert.equal(run?.status, 'done')
    const limitedUsage = await limited.manager.config.store.listUsage(refused.runId)
    assert.lengthOf(limitedUsage, 1)
  })

  test('without followUps there is no extra call and no followUps field', async ({ assert }) => {
    const app = await agentApp()
    app.fake.reply({ text: ['Answer.'] })
    const { frames, answer } = await turn(app, { message: 'Hi' })
    assert.deepEqual(frames.at(-1)?.data, {})
    assert.notProperty(answer, 'followUps')
    assert.lengthOf(app.fake.requests, 1)
  })

  test('the answer is parsed from JSON, fenced JSON or lines; empty, repeated and overlong entries are dropped', ({
    assert,
  }) => {
    assert.deepEqual(parseFollowUps('```json\n["A?", "A?", "", 7, "B?"]\n```', 3), ['A?', 'B?'])
    assert.deepEqual(parseFollowUps('- One?\n* Two?\n\n3) Three?', 3), ['One?', 'Two?', 'Three?'])
    assert.deepEqual(parseFollowUps(`["${'x'.repeat(301)}", "Short?"]`, 3), ['Short?'])
    assert.deepEqual(parseFollowUps('{"not": "a list"}', 3), [])
  })

  test('defineConfig names followUps when its count is not 1 to 10', ({ assert }) => {
    for (const followUps of [{ count: 0 }, { count: 11 }, { count: 2.5 }, 'yes']) {
      assert.throws(
        () =>
          defineConfig({
            model: { label: 'x', streamStep: async function* () {} },
            actorResolver: actors.header(),
            followUps: followUps as any,
          }),
        /Invalid "followUps" in config\/agent\.ts/
      )
    }
  })
})
