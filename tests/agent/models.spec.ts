import { test } from '@japa/runner'
import {
  AgentActorRollup,
  AgentDurationRollup,
  AgentMessage,
  AgentModelRollup,
  AgentPricing,
  AgentRollup,
  AgentRunRollup,
  AgentRun,
  AgentThread,
  AgentToolCall,
  AgentUsage,
} from '../../src/agent/models/main.ts'
import { agentApp } from './helpers.ts'
import { bucketUpperBound } from '../../src/agent/main.ts'
import { dayFromToday } from './insight_helpers.ts'

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
    assert.deepEqual([run.status, run.steps, run.retries, run.agentName], ['done', 2, 0, 'default'])
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

  test('the pricing, usage cost, run duration and rollup columns read back as numbers', async ({
    assert,
  }) => {
    const app = await agentApp({
      config: { pricing: { 'fake-model': { inputPricePer1m: '1000', outputPricePer1m: 2000 } } },
    })
    const { response, sse } = await app.chat({ message: 'price' })
    await sse.rest()
    const runId = response.headers.get('x-agent-run-id')!

    const price = await AgentPricing.findByOrFail('modelId', 'fake-model')
    assert.deepEqual(
      [price.inputPricePer1m, price.outputPricePer1m, price.cacheReadPricePer1m],
      [1_000_000_000, 2_000_000_000, null]
    )
    assert.instanceOf(price.effectiveFrom, Date)
    const [usage] = await AgentUsage.query().where('runId', runId)
    assert.deepEqual(
      [usage.cost, usage.costSource, usage.priceId],
      [10 * 1000 + 5 * 2000, 'estimated', price.id]
    )
    const run = await AgentRun.findOrFail(runId)
    assert.isNumber(run.durationMs)
    const rollup = await AgentRollup.findByOrFail('day', dayFromToday())
    assert.deepEqual(
      [rollup.model, rollup.modelCalls, rollup.cost, rollup.runsSucceeded, rollup.outputTokens],
      ['fake.chat:fake-model', 1, 20_000, 1, 5]
    )
    const byModel = await AgentModelRollup.findByOrFail('day', dayFromToday())
    assert.deepEqual([byModel.model, byModel.modelCalls, byModel.cost], [rollup.model, 1, 20_000])
    const byActor = await AgentActorRollup.findByOrFail('day', dayFromToday())
    assert.deepEqual([byActor.actorRef, byActor.outputTokens], ['alice', 5])
    const runs = await AgentRunRollup.findByOrFail('day', dayFromToday())
    assert.deepEqual([runs.agentName, runs.runsSucceeded, runs.runsFailed], ['default', 1, 0])
    const timed = await AgentDurationRollup.findByOrFail('day', dayFromToday())
    assert.deepEqual([timed.agentName, timed.runs], ['default', 1])
    assert.isAtLeast(bucketUpperBound(timed.bucket), run.durationMs!)
  })
})
