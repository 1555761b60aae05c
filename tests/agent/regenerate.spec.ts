import { test } from '@japa/runner'
import { defineTool } from '../../src/agent/main.ts'
import { ALICE, BOB, agentApp, bodyOf, deltasOf, errorOf } from './helpers.ts'

type App = Awaited<ReturnType<typeof agentApp>>

const double = defineTool({
  spec: {
    name: 'double',
    description: 'Doubles a number',
    inputSchema: {
      type: 'object',
      properties: { amount: { type: 'integer' } },
      required: ['amount'],
    },
  },
  handler: (input: { amount: number }) => ({ total: input.amount * 2 }),
})

/** The stored messages of a thread as [role, content, runId] */
async function messagesOf(app: App, threadId: string) {
  const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
  return detail.messages as Array<{ id: number; role: string; content: string; runId: string }>
}

/** The stored contents of a thread's messages, in order */
async function contentsOf(app: App, threadId: string) {
  const messages = await messagesOf(app, threadId)
  return messages.map((message) => message.content)
}

/** A thread: user "one", "A1", then user "two" answered with a tool call, its result and "A2" */
async function threadWithToolTurn(app: App) {
  app.fake.reply(
    { text: ['A1'] },
    { text: ['Checking. '], toolCalls: [{ id: 'call_1', name: 'double', input: { amount: 2 } }] },
    { text: ['A2'] }
  )
  const first = await app.chat({ message: 'one' })
  await first.sse.rest()
  const threadId = first.response.headers.get('x-agent-thread-id')!
  const second = await app.chat({ message: 'two', threadId })
  await second.sse.rest()
  return threadId
}

test.group('Agent regenerate', () => {
  test('regenerate drops the last answer with its tool turn and streams and stores a new one', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { tools: [double] } })
    const threadId = await threadWithToolTurn(app)
    const before = await messagesOf(app, threadId)
    assert.deepEqual(
      before.map((message) => message.role),
      ['user', 'assistant', 'user', 'assistant', 'tool', 'assistant']
    )

    app.fake.reply({ text: ['A2', ' again'] })
    const { response, sse } = await app.chat({ message: 'two', threadId, regenerate: true })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('x-agent-thread-id'), threadId)
    const runId = response.headers.get('x-agent-run-id')!
    const frames = await sse.rest()
    assert.deepEqual(frames[0].data, { runId, threadId })
    assert.deepEqual(deltasOf(frames), ['A2', ' again'])
    assert.equal(frames.at(-1)?.event, 'done')

    // The model answered the stored question, without the dropped answer
    const sent = app.fake.requests.at(-1)!.body.messages.filter((m: any) => m.role !== 'system')
    assert.deepEqual(
      sent.map((message: any) => [message.role, message.content]),
      [
        ['user', 'one'],
        ['assistant', 'A1'],
        ['user', 'two'],
      ]
    )
    const after = await messagesOf(app, threadId)
    assert.deepEqual(
      after.map((message) => [message.role, message.content]),
      [
        ['user', 'one'],
        ['assistant', 'A1'],
        ['user', 'two'],
        ['assistant', 'A2 again'],
      ]
    )
    // The question keeps its id and first run; the answer belongs to the new run
    assert.equal(after[2].id, before[2].id)
    assert.equal(after[2].runId, before[2].runId)
    assert.equal(after[3].runId, runId)
    const run = await app.manager.config.store.findRun(runId)
    assert.equal(run?.status, 'done')
    const usage = await app.manager.config.store.listUsage(runId)
    assert.lengthOf(usage, 1)
  })

  test('regenerate without "message" answers the stored question; another text is refused', async ({
    assert,
  }) => {
    const app = await agentApp()
    app.fake.reply({ text: ['A1'] })
    const first = await app.chat({ message: 'one' })
    await first.sse.rest()
    const threadId = first.response.headers.get('x-agent-thread-id')!

    const other = await app.chat({ message: 'not the question', threadId, regenerate: true })
    assert.equal(other.response.status, 400)
    assert.include(await errorOf(other.response), {
      code: 'E_AGENT_INVALID_REQUEST',
      field: 'message',
    })
    assert.deepEqual(await contentsOf(app, threadId), ['one', 'A1'])

    app.fake.reply({ text: ['B1'] })
    const again = await app.chat({ threadId, regenerate: true })
    assert.equal(again.response.status, 200)
    assert.deepEqual(deltasOf(await again.sse.rest()), ['B1'])
    assert.deepEqual(await contentsOf(app, threadId), ['one', 'B1'])
  })

  test('regenerate checks ownership: 403 for another actor, 404 for an unknown or deleted thread, 400 without a thread', async ({
    assert,
  }) => {
    const app = await agentApp()
    app.fake.reply({ text: ['A1'] })
    const first = await app.chat({ message: 'one' })
    await first.sse.rest()
    const threadId = first.response.headers.get('x-agent-thread-id')!
    const requestsBefore = app.fake.requests.length

    const forbidden = await app.chat({ threadId, regenerate: true }, BOB)
    assert.equal(forbidden.response.status, 403)
    assert.include(await errorOf(forbidden.response), {
      code: 'E_AGENT_FORBIDDEN',
      resource: 'thread',
    })

    const unknown = await app.chat({
      threadId: '00000000-0000-0000-0000-000000000000',
      regenerate: true,
    })
    assert.equal(unknown.response.status, 404)
    assert.include(await errorOf(unknown.response), {
      code: 'E_AGENT_NOT_FOUND',
      resource: 'thread',
    })

    const noThread = await app.chat({ message: 'one', regenerate: true })
    assert.equal(noThread.response.status, 400)
    assert.include(await errorOf(noThread.response), { field: 'threadId' })

    const notBoolean = await app.chat({ message: 'one', threadId, regenerate: 'yes' })
    assert.equal(notBoolean.response.status, 400)
    assert.include(await errorOf(notBoolean.response), { field: 'regenerate' })

    // None of the refused requests changed the thread or reached the model
    assert.deepEqual(await contentsOf(app, threadId), ['one', 'A1'])
    assert.equal(app.fake.requests.length, requestsBefore)

    await app.request('DELETE', `/threads/${threadId}`, ALICE)
    const deleted = await app.chat({ threadId, regenerate: true })
    assert.equal(deleted.response.status, 404)
  })

  test('regenerate on a thread with no user message answers 409 naming the problem', async ({
    assert,
  }) => {
    const app = await agentApp()
    app.fake.reply({ text: ['A1'] })
    const first = await app.chat({ message: 'one' })
    await first.sse.rest()
    const threadId = first.response.headers.get('x-agent-thread-id')!
    const [question] = await messagesOf(app, threadId)
    await app.request('DELETE', `/threads/${threadId}/from/${question.id}`)

    const { response } = await app.chat({ threadId, regenerate: true })
    assert.equal(response.status, 409)
    assert.deepEqual(await errorOf(response), {
      code: 'E_AGENT_NOTHING_TO_REGENERATE',
      message: 'This thread has no user message to answer again',
    })
    // No run was started for it
    const runs = await app.db.from('agent_runs').where('thread_id', threadId).count('* as total')
    assert.equal(Number(runs[0].total), 1)
  })
})
