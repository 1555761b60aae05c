import { test } from '@japa/runner'
import { ALICE, agentApp } from './helpers.ts'

test.group('Agent chat stream', () => {
  test('a turn streams meta, deltas and done as server-sent events with run and thread headers', async ({
    assert,
  }) => {
    const { chat, fake, manager } = await agentApp()
    fake.reply({ text: ['Hel', 'lo ', 'there'] })

    const { response, sse } = await chat({ message: 'Hi' })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'text/event-stream; charset=utf-8')
    const runId = response.headers.get('x-agent-run-id')!
    const threadId = response.headers.get('x-agent-thread-id')!
    assert.match(runId, /^[0-9a-f-]{36}$/)
    assert.match(threadId, /^[0-9a-f-]{36}$/)

    const frames = await sse.rest()
    assert.deepEqual(frames, [
      { id: '1', event: 'meta', data: { runId, threadId } },
      { id: '2', data: { delta: 'Hel' } },
      { id: '3', data: { delta: 'lo ' } },
      { id: '4', data: { delta: 'there' } },
      { id: '5', event: 'done', data: {} },
    ])

    const run = await manager.config.store.findRun(runId)
    assert.equal(run?.status, 'done')
    assert.equal(run?.actorRef, ALICE.id)
    const messages = await manager.config.store.listMessages(threadId)
    assert.deepEqual(
      messages.map((message) => [message.role, message.content]),
      [
        ['user', 'Hi'],
        ['assistant', 'Hello there'],
      ]
    )
    assert.equal(fake.requests.length, 1)
    assert.deepEqual(fake.requests[0].body.messages.at(-1), { role: 'user', content: 'Hi' })
  })
})
