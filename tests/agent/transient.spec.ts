import { test } from '@japa/runner'
import { defineTool } from '../../src/agent/main.ts'
import { TRANSIENT_LIMITS } from '../../src/agent/transient/registry.ts'
import { TransientThread } from '../../src/agent/transient/thread.ts'
import { ALICE, BOB, agentApp, bodyOf, deltasOf, errorOf } from './helpers.ts'

type App = Awaited<ReturnType<typeof agentApp>>

const THREAD_TABLES = [
  'agent_threads',
  'agent_messages',
  'agent_runs',
  'agent_tool_calls',
  'agent_usage',
] as const

const double = defineTool({
  spec: {
    name: 'double',
    description: 'Doubles a number',
    inputSchema: { type: 'object', properties: { amount: { type: 'integer' } } },
  },
  handler: (input: { amount: number }) => ({ total: input.amount * 2 }),
})

/** Rows of each thread table */
async function rowCounts(app: App) {
  const counts: Record<string, number> = {}
  for (const table of THREAD_TABLES) {
    const [row] = await app.db.from(table).count('* as total')
    counts[table] = Number(row.total)
  }
  return counts
}

/** The summed rollup counters of every row */
async function rollupTotals(app: App) {
  const [row] = await app.db
    .from('agent_rollups')
    .sum('model_calls as calls')
    .sum('runs_succeeded as succeeded')
  return { calls: Number(row.calls ?? 0), succeeded: Number(row.succeeded ?? 0) }
}

/** A finished transient turn: its thread and run ids */
async function transientTurn(app: App, body: Record<string, unknown>, actor = ALICE) {
  const { response, sse } = await app.chat(body, actor)
  if (response.status !== 200) throw new Error(`chat answered ${response.status}`)
  const frames = await sse.rest()
  return {
    frames,
    threadId: response.headers.get('x-agent-thread-id')!,
    runId: response.headers.get('x-agent-run-id')!,
  }
}

test.group('Agent transient threads', () => {
  test('transient turns write no thread, message, run, tool call or usage row until promote writes them all', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { tools: [double] } })
    app.fake.reply(
      {
        text: ['Let me see. '],
        toolCalls: [{ id: 'call_1', name: 'double', input: { amount: 4 } }],
      },
      { text: ['It is 8.'] },
      { text: ['Still 8.'] }
    )
    const first = await transientTurn(app, { message: 'double 4', transient: true })
    assert.deepEqual(deltasOf(first.frames), ['Let me see. ', 'It is 8.'])
    assert.equal(first.frames.at(-1)?.event, 'done')
    const { threadId } = first
    // A later turn names the thread only: it stays transient and sends the history
    const second = await transientTurn(app, { message: 'sure?', threadId })
    assert.deepEqual(deltasOf(second.frames), ['Still 8.'])
    assert.deepEqual(
      app.fake.requests
        .at(-1)!
        .body.messages.filter((message: any) => message.role === 'user')
        .map((message: any) => message.content),
      ['double 4', 'sure?']
    )

    assert.deepEqual(await rowCounts(app), {
      agent_threads: 0,
      agent_messages: 0,
      agent_runs: 0,
      agent_tool_calls: 0,
      agent_usage: 0,
    })
    // Spend is counted at once: three model calls and two finished runs in the rollups
    assert.deepEqual(await rollupTotals(app), { calls: 3, succeeded: 2 })

    // The actor reads it, and it is not listed among the stored threads
    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.include(detail, { id: threadId, title: 'double 4', transient: true })
    assert.deepEqual(
      detail.messages.map((message: any) => message.role),
      ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']
    )
    assert.deepEqual(await bodyOf(await app.request('GET', '/threads')), [])

    const promoted = await app.request('POST', `/threads/${threadId}/promote`)
    assert.deepEqual(await bodyOf(promoted), { ok: true })
    assert.deepEqual(await rowCounts(app), {
      agent_threads: 1,
      agent_messages: 6,
      agent_runs: 2,
      agent_tool_calls: 1,
      agent_usage: 3,
    })
    // Promote writes rows only: the rollups counted these calls already
    assert.deepEqual(await rollupTotals(app), { calls: 3, succeeded: 2 })
    const stored = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.notProperty(stored, 'transient')
    assert.deepEqual(
      stored.messages.map((message: any) => [message.role, message.content, message.runId]),
      detail.messages.map((message: any) => [message.role, message.content, message.runId])
    )
    const run = await app.manager.config.store.findRun(first.runId)
    assert.include(run, { status: 'done', steps: 2, threadId })
    const [call] = await app.manager.config.store.listToolCalls(first.runId)
    assert.include(call, { status: 'succeeded', toolName: 'double' })
    assert.deepEqual(call.output, { total: 8 })
    const threads = await bodyOf(await app.request('GET', '/threads'))
    assert.deepEqual(
      threads.map((thread: any) => thread.id),
      [threadId]
    )

    // Once stored, the next turn writes as usual, and a second promote has nothing to do
    await transientTurn(app, { message: 'thanks', threadId })
    const counts = await rowCounts(app)
    assert.equal(counts.agent_messages, 8)
    const again = await app.request('POST', `/threads/${threadId}/promote`)
    assert.deepEqual(await bodyOf(again), { ok: false })
  })

  test('a transient thread is its actor alone: 403 for another, 404 for an unknown id', async ({
    assert,
  }) => {
    const app = await agentApp()
    const { threadId, runId } = await transientTurn(app, { message: 'hi', transient: true })

    for (const [method, path, body] of [
      ['GET', `/threads/${threadId}`, undefined],
      ['POST', `/threads/${threadId}/promote`, undefined],
      ['PATCH', `/threads/${threadId}`, { title: 'mine now' }],
      ['DELETE', `/threads/${threadId}`, undefined],
      ['POST', '/chat', { message: 'hello', threadId }],
    ] as const) {
      const response = await app.request(method, path, BOB, body)
      assert.equal(response.status, 403, `${method} ${path}`)
      assert.include(await errorOf(response), { code: 'E_AGENT_FORBIDDEN', resource: 'thread' })
    }
    const resumed = await app.resume(runId, { actor: BOB })
    assert.equal(resumed.response.status, 403)

    const unknown = await app.request(
      'POST',
      '/threads/00000000-0000-0000-0000-000000000000/promote'
    )
    assert.equal(unknown.status, 404)
    assert.include(await errorOf(unknown), { code: 'E_AGENT_NOT_FOUND', resource: 'thread' })

    // Its owner still resumes the run, and nothing was written by the refused requests
    const own = await app.resume(runId)
    const frames = await own.sse.rest()
    assert.equal(frames.at(-1)?.event, 'done')
    const counts = await rowCounts(app)
    assert.equal(counts.agent_threads, 0)
  })

  test('a deleted transient thread is forgotten; a stored thread cannot turn transient', async ({
    assert,
  }) => {
    const app = await agentApp()
    const { threadId } = await transientTurn(app, { message: 'hi', transient: true })
    assert.deepEqual(await bodyOf(await app.request('DELETE', `/threads/${threadId}`)), {
      ok: true,
    })
    const gone = await app.request('POST', `/threads/${threadId}/promote`)
    assert.equal(gone.status, 404)

    const stored = await transientTurn(app, { message: 'keep me' })
    const refused = await app.chat({
      message: 'forget me',
      threadId: stored.threadId,
      transient: true,
    })
    assert.equal(refused.response.status, 400)
    assert.include(await errorOf(refused.response), {
      code: 'E_AGENT_INVALID_REQUEST',
      field: 'transient',
    })
    const notBoolean = await app.chat({ message: 'hi', transient: 1 })
    assert.equal(notBoolean.response.status, 400)
    assert.include(await errorOf(notBoolean.response), { field: 'transient' })
  })

  test('promote waits for the run to end (409 while it streams) and the quota counts transient calls', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { quotaLimitTokens: 100_000 } })
    app.fake.reply({ text: ['slow', ' answer'], stallAfter: 1 })
    const { response, sse } = await app.chat({ message: 'take your time', transient: true })
    const threadId = response.headers.get('x-agent-thread-id')!
    await app.fake.stalled()

    const early = await app.request('POST', `/threads/${threadId}/promote`)
    assert.equal(early.status, 409)
    assert.include(await errorOf(early), { code: 'E_AGENT_THREAD_BUSY' })

    app.fake.release()
    await sse.rest()
    // The budget is the actor's: the transient call was charged (10 prompt + 5 completion)
    assert.deepEqual(await bodyOf(await app.request('GET', '/quota/today')), { usedTokens: 15 })
    const promoted = await app.request('POST', `/threads/${threadId}/promote`)
    assert.deepEqual(await bodyOf(promoted), { ok: true })
    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.deepEqual(
      detail.messages.map((message: any) => message.content),
      ['take your time', 'slow answer']
    )
  })

  test('a tool call of a transient thread waits for approval and is decided like a stored one', async ({
    assert,
  }) => {
    const refunds: unknown[] = []
    const refund = defineTool({
      spec: {
        name: 'refund',
        description: 'Refunds an order',
        requiresApproval: true,
        inputSchema: { type: 'object', properties: { order: { type: 'string' } } },
      },
      handler: (input: { order: string }) => {
        refunds.push(input)
        return { refunded: input.order }
      },
    })
    const app = await agentApp({ config: { tools: [refund] } })
    app.fake.reply(
      { toolCalls: [{ id: 'call_t', name: 'refund', input: { order: 'A1' } }] },
      { text: ['Refunded.'] }
    )
    const { sse } = await app.chat({ message: 'refund A1', transient: true })
    await sse.until((frame) => frame.event === 'approval')

    const foreign = await app.request('POST', '/tool-call/approve', BOB, { toolCallId: 'call_t' })
    assert.equal(foreign.status, 403)
    const approved = await app.request('POST', '/tool-call/approve', ALICE, {
      toolCallId: 'call_t',
    })
    assert.deepEqual(await bodyOf(approved), { ok: true })
    assert.deepEqual(deltasOf(await sse.rest()), ['Refunded.'])
    assert.deepEqual(refunds, [{ order: 'A1' }])
    const late = await app.request('POST', '/tool-call/approve', ALICE, { toolCallId: 'call_t' })
    assert.deepEqual(await bodyOf(late), { ok: false })
    const counts = await rowCounts(app)
    assert.equal(counts.agent_tool_calls, 0)
  })

  test(`an actor holds at most ${TRANSIENT_LIMITS.perActor} transient threads`, async ({
    assert,
  }) => {
    const app = await agentApp()
    for (let index = 0; index < TRANSIENT_LIMITS.perActor; index++) {
      await transientTurn(app, { message: `thread ${index}`, transient: true })
    }
    const refused = await app.chat({ message: 'one more', transient: true })
    assert.equal(refused.response.status, 409)
    assert.include(await errorOf(refused.response), { code: 'E_AGENT_TRANSIENT_THREAD' })
    // Another actor is not affected
    const other = await transientTurn(app, { message: 'mine', transient: true }, BOB)
    assert.equal(other.frames.at(-1)?.event, 'done')
  })

  test('rename, truncate, regenerate and cancel work on a transient thread; a fork answers 409', async ({
    assert,
  }) => {
    const app = await agentApp()
    app.fake.reply({ text: ['A1'] }, { text: ['A2'] }, { text: ['A2 again'] })
    const { threadId } = await transientTurn(app, { message: 'one', transient: true })
    await transientTurn(app, { message: 'two', threadId })

    const renamed = await app.request('PATCH', `/threads/${threadId}`, ALICE, { title: 'Draft' })
    assert.deepEqual(await bodyOf(renamed), { ok: true })
    const regenerated = await transientTurn(app, { threadId, regenerate: true })
    assert.deepEqual(deltasOf(regenerated.frames), ['A2 again'])
    let detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.equal(detail.title, 'Draft')
    assert.deepEqual(
      detail.messages.map((message: any) => message.content),
      ['one', 'A1', 'two', 'A2 again']
    )

    const truncated = await app.request(
      'DELETE',
      `/threads/${threadId}/from/${detail.messages[2].id}`
    )
    assert.deepEqual(await bodyOf(truncated), { ok: true })
    detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.deepEqual(
      detail.messages.map((message: any) => message.content),
      ['one', 'A1']
    )
    const fork = await app.request(
      'POST',
      `/threads/${threadId}/fork-from/${detail.messages[0].id}`
    )
    assert.equal(fork.status, 409)
    assert.include(await errorOf(fork), { code: 'E_AGENT_TRANSIENT_THREAD' })

    app.fake.reply({ text: ['never', ' finished'], stallAfter: 1 })
    const { response, sse } = await app.chat({ message: 'slow', threadId })
    const runId = response.headers.get('x-agent-run-id')!
    await app.fake.stalled()
    const cancelled = await app.request('POST', `/chat/${runId}/cancel`)
    assert.deepEqual(await bodyOf(cancelled), { aborted: true })
    const frames = await sse.rest()
    assert.deepEqual(frames.at(-1)?.data, { aborted: true })

    const promoted = await app.request('POST', `/threads/${threadId}/promote`)
    assert.deepEqual(await bodyOf(promoted), { ok: true })
    const run = await app.manager.config.store.findRun(runId)
    assert.include(run, { status: 'aborted', threadId })
    const [stored] = await app.db.from('agent_threads').where('id', threadId)
    assert.equal(stored.title, 'Draft')
  })

  test('a transient thread refuses a turn once it holds its maximum of messages', async ({
    assert,
  }) => {
    const rows = {
      countUsage: async () => {
        throw new Error('not called')
      },
      countRunEnd: async () => {},
      save: async () => {},
    }
    const now = new Date()
    const thread = new TransientThread(
      { transient: rows } as any,
      { id: 't', actorRef: 'a', title: null, defaultAgent: null, createdAt: now, updatedAt: now },
      2
    )
    const run = { threadId: 't', actorRef: 'a', agentName: 'default' }
    await thread.createRun({ ...run, id: 'r1' })
    await thread.appendMessage({ threadId: 't', runId: 'r1', role: 'user', content: 'one' })
    await thread.appendMessage({ threadId: 't', runId: 'r1', role: 'assistant', content: 'A1' })
    await thread.finishRun('r1', { status: 'done', steps: 1, model: 'm' })
    await assert.rejects(
      () => thread.createRun({ ...run, id: 'r2' }),
      'This transient thread holds 2 messages: promote it to continue'
    )
  })
})
