import { test } from '@japa/runner'
import { defineTool } from '../../src/agent/main.ts'
import { ALICE, BOB, agentApp, bodyOf, deltasOf, errorOf } from './helpers.ts'

function refundTool() {
  const calls: unknown[] = []
  const tool = defineTool({
    spec: {
      name: 'refund',
      description: 'Refunds an order',
      roles: ['ADMIN'],
      requiresApproval: true,
      inputSchema: { type: 'object', properties: { order: { type: 'string' } } },
    },
    handler(input: { order: string }) {
      calls.push(input)
      return { refunded: input.order }
    },
  })
  return { tool, calls }
}

async function pendingRun(app: Awaited<ReturnType<typeof agentApp>>) {
  app.fake.reply(
    { text: ['Refunding.'], toolCalls: [{ id: 'call_r', name: 'refund', input: { order: 'A1' } }] },
    { text: ['Done.'] }
  )
  const { response, sse } = await app.chat({ message: 'refund A1' })
  const frames = await sse.until((frame) => frame.event === 'approval')
  return { response, sse, frames, runId: response.headers.get('x-agent-run-id')! }
}

test.group('Agent tool approvals', () => {
  test('a call needing approval is recorded pending before the stream announces it, and runs once approved', async ({
    assert,
  }) => {
    const { tool, calls } = refundTool()
    const app = await agentApp({ config: { tools: [tool] } })
    const { sse, frames, runId } = await pendingRun(app)
    assert.deepEqual(frames.at(-1)?.data, {
      toolCallId: 'call_r',
      toolName: 'refund',
      input: { order: 'A1' },
    })
    // By the time a client reads the frame, the row already says so
    const [row] = await app.manager.config.store.listToolCalls(runId)
    assert.equal(row.status, 'pending_approval')
    assert.deepEqual(calls, [])

    const approved = await app.request('POST', '/tool-call/approve', ALICE, {
      toolCallId: 'call_r',
    })
    assert.deepEqual(await bodyOf(approved), { ok: true })
    const rest = await sse.rest()
    assert.deepEqual(deltasOf(rest), ['Done.'])
    assert.equal(rest.at(-1)?.event, 'done')
    assert.deepEqual(calls, [{ order: 'A1' }])
    const [done] = await app.manager.config.store.listToolCalls(runId)
    assert.equal(done.status, 'succeeded')
  })

  test('a rejected call never runs and the model reads the reason', async ({ assert }) => {
    const { tool, calls } = refundTool()
    const app = await agentApp({ config: { tools: [tool] } })
    const { sse, runId } = await pendingRun(app)
    const rejected = await app.request('POST', '/tool-call/reject', ALICE, {
      toolCallId: 'call_r',
      reason: 'not eligible',
    })
    assert.deepEqual(await bodyOf(rejected), { ok: true })
    await sse.rest()
    assert.deepEqual(calls, [])
    const toolMessage = app.fake.requests[1].body.messages.find((m: any) => m.role === 'tool')
    assert.deepEqual(JSON.parse(toolMessage.content), {
      error: 'rejected',
      message: 'A person rejected this call of "refund"',
      reason: 'not eligible',
    })
    const [row] = await app.manager.config.store.listToolCalls(runId)
    assert.equal(row.status, 'rejected')
  })

  test('concurrent decisions: the first wins, every other answers ok false', async ({ assert }) => {
    const { tool, calls } = refundTool()
    const app = await agentApp({ config: { tools: [tool] } })
    const { sse, runId } = await pendingRun(app)
    const answers = await Promise.all([
      app.request('POST', '/tool-call/approve', ALICE, { toolCallId: 'call_r' }),
      app.request('POST', '/tool-call/reject', ALICE, { toolCallId: 'call_r' }),
      app.request('POST', '/tool-call/approve', ALICE, { toolCallId: 'call_r' }),
    ])
    const bodies = await Promise.all(answers.map((answer) => bodyOf(answer)))
    assert.equal(bodies.filter((body) => body.ok === true).length, 1, JSON.stringify(bodies))
    await sse.rest()
    const [row] = await app.manager.config.store.listToolCalls(runId)
    // The winning decision is the one that happened: approved runs once, rejected never
    if (row.status === 'succeeded') assert.deepEqual(calls, [{ order: 'A1' }])
    else assert.deepEqual([row.status, calls.length], ['rejected', 0])
    // The decision is a conditional update: a late one changes nothing
    assert.isFalse(await app.manager.config.store.decideApproval(row.id, false, 'late'))
    const [after] = await app.manager.config.store.listToolCalls(runId)
    assert.equal(after.status, row.status)
  })

  test('deciding another actor call is 403, an unknown call 404', async ({ assert }) => {
    const { tool, calls } = refundTool()
    const app = await agentApp({ config: { tools: [tool] } })
    const { sse } = await pendingRun(app)
    const foreign = await app.request('POST', '/tool-call/approve', BOB, { toolCallId: 'call_r' })
    assert.equal(foreign.status, 403)
    assert.include(await errorOf(foreign), { code: 'E_AGENT_FORBIDDEN', resource: 'tool call' })
    const unknown = await app.request('POST', '/tool-call/reject', ALICE, { toolCallId: 'nope' })
    assert.equal(unknown.status, 404)
    const bad = await app.request('POST', '/tool-call/approve', ALICE, {})
    assert.include(await errorOf(bad), { code: 'E_AGENT_INVALID_REQUEST', field: 'toolCallId' })
    assert.deepEqual(calls, [])
    await app.request('POST', `/chat/${sse.response.headers.get('x-agent-run-id')}/cancel`)
    const rest = await sse.rest()
    assert.deepEqual(rest.at(-1), {
      id: String(rest.at(-1)?.id),
      event: 'done',
      data: { aborted: true },
    })
  })
})
