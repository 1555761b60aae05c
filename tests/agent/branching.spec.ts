import { test } from '@japa/runner'
import { ALICE, BOB, agentApp, bodyOf, errorOf } from './helpers.ts'

type App = Awaited<ReturnType<typeof agentApp>>

/** A thread with two finished turns: user "one", "A1", user "two", "A2" */
async function twoTurns(app: App) {
  app.fake.reply({ text: ['A1'] }, { text: ['A2'] })
  const first = await app.chat({ message: 'one' })
  await first.sse.rest()
  const threadId = first.response.headers.get('x-agent-thread-id')!
  const second = await app.chat({ message: 'two', threadId })
  await second.sse.rest()
  const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
  return { threadId, messages: detail.messages as Array<{ id: number; content: string }> }
}

/** What the model was last sent, without the system prompt */
function lastPrompt(app: App) {
  return app.fake.requests
    .at(-1)!
    .body.messages.filter((message: any) => message.role !== 'system')
    .map((message: any) => message.content)
}

test.group('Agent thread truncate and fork', () => {
  test('DELETE /threads/:id/from/:messageId removes the message and every later one', async ({
    assert,
  }) => {
    const app = await agentApp()
    const { threadId, messages } = await twoTurns(app)
    const response = await app.request('DELETE', `/threads/${threadId}/from/${messages[2].id}`)
    assert.deepEqual(await bodyOf(response), { ok: true })
    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.deepEqual(
      detail.messages.map((message: any) => message.content),
      ['one', 'A1']
    )
    // The next turn continues from what is left
    const next = await app.chat({ message: 'three', threadId })
    await next.sse.rest()
    assert.deepEqual(lastPrompt(app), ['one', 'A1', 'three'])
  })

  test('POST /threads/:id/fork-from/:messageId copies the thread up to the message into a new one', async ({
    assert,
  }) => {
    const app = await agentApp()
    const { threadId, messages } = await twoTurns(app)
    const response = await app.request('POST', `/threads/${threadId}/fork-from/${messages[1].id}`)
    assert.equal(response.status, 200)
    const fork = await bodyOf(response)
    assert.notEqual(fork.id, threadId)
    assert.include(fork, { title: 'one', defaultAgent: null })
    const forked = await bodyOf(await app.request('GET', `/threads/${fork.id}`))
    assert.deepEqual(
      forked.messages.map((message: any) => [message.role, message.content]),
      [
        ['user', 'one'],
        ['assistant', 'A1'],
      ]
    )
    // The source thread is unchanged, and both are the actor's
    const source = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.lengthOf(source.messages, 4)
    const threads = await bodyOf(await app.request('GET', '/threads'))
    assert.sameMembers(
      threads.map((thread: any) => thread.id),
      [threadId, fork.id]
    )
    const next = await app.chat({ message: 'other', threadId: fork.id })
    await next.sse.rest()
    assert.deepEqual(lastPrompt(app), ['one', 'A1', 'other'])
  })

  test('ownership and unknown ids: 403 for another actor, 404 for an unknown thread or message', async ({
    assert,
  }) => {
    const app = await agentApp()
    const { threadId, messages } = await twoTurns(app)
    const other = await twoTurns(app)

    const forbidden = await app.request(
      'POST',
      `/threads/${threadId}/fork-from/${messages[0].id}`,
      BOB
    )
    assert.equal(forbidden.status, 403)
    const denied = await app.request('DELETE', `/threads/${threadId}/from/${messages[0].id}`, BOB)
    assert.equal(denied.status, 403)

    const cases = [
      [`/threads/${threadId}/from/${other.messages[0].id}`, 'message'],
      [`/threads/${threadId}/from/abc`, 'message'],
      [`/threads/00000000-0000-0000-0000-000000000000/from/${messages[0].id}`, 'thread'],
    ]
    for (const [path, resource] of cases) {
      const response = await app.request('DELETE', path, ALICE)
      assert.equal(response.status, 404, path)
      assert.include(await errorOf(response), { code: 'E_AGENT_NOT_FOUND', resource })
    }
    const unknownFork = await app.request(
      'POST',
      `/threads/${threadId}/fork-from/${other.messages[0].id}`
    )
    assert.equal(unknownFork.status, 404)
    // Nothing was removed by the refused requests
    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.lengthOf(detail.messages, 4)
  })
})
