import { test } from '@japa/runner'
import {
  AgentMessage,
  AgentRun,
  AgentThread,
  AgentToolCall,
  AgentUsage,
} from '../../src/agent/models/main.ts'
import { agentApp } from './helpers.ts'

test.group('Agent Lucid models', () => {
  test('the models read what a turn with a tool call wrote, JSON and booleans decoded', async ({
    assert,
  }) => {
    const app = await agentApp({
      config: {
        tools: [
          {
            spec: { name: 'echo', description: 'Echoes', roles: ['ADMIN'] },
            handler: (input: unknown) => ({ echoed: input }),
          },
        ],
      },
    })
    app.fake.reply(
      { toolCalls: [{ id: 'call_m', name: 'echo', input: { n: 1 } }] },
      { text: ['done'] }
    )
    const { response, sse } = await app.chat({ message: 'echo' })
    await sse.rest()
    const runId = response.headers.get('x-agent-run-id')!
    const threadId = response.headers.get('x-agent-thread-id')!

    const thread = await AgentThread.findOrFail(threadId)
    assert.equal(thread.actorRef, 'alice')
    assert.instanceOf(thread.createdAt, Date)
    const run = await AgentRun.findOrFail(runId)
    assert.deepEqual([run.status, run.steps, run.agentName], ['done', 2, 'default'])
    const messages = await AgentMessage.query().where('threadId', threadId).orderBy('id')
    assert.deepEqual(
      messages.map((message) => message.role),
      ['user', 'assistant', 'tool', 'assistant']
    )
    assert.deepEqual(messages[1].toolCalls, [
      { toolCallId: 'call_m', toolName: 'echo', input: { n: 1 } },
    ])
    const call = await AgentToolCall.findByOrFail('toolCallId', 'call_m')
    assert.deepEqual(call.output, { echoed: { n: 1 } })
    assert.equal(call.status, 'succeeded')
    const usage = await AgentUsage.query().where('runId', runId).orderBy('step')
    assert.deepEqual(
      usage.map((row) => [row.step, row.usageKnown, row.uncachedInputTokens]),
      [
        [1, true, 10],
        [2, true, 10],
      ]
    )
  })
})
