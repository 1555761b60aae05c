import { test } from '@japa/runner'
import { agentApp, deltasOf } from './helpers.ts'

async function runOnce(app: Awaited<ReturnType<typeof agentApp>>) {
  const { response, sse } = await app.chat({ message: 'count my tokens' })
  const frames = await sse.rest()
  const runId = response.headers.get('x-agent-run-id')!
  return { frames, runId, usage: await app.manager.config.store.listUsage(runId) }
}

const buckets = (row: any) => ({
  known: row.known,
  uncachedInputTokens: row.uncachedInputTokens,
  cacheReadTokens: row.cacheReadTokens,
  cacheWriteTokens: row.cacheWriteTokens,
  outputTokens: row.outputTokens,
  reasoningTokens: row.reasoningTokens,
})

test.group('Agent usage buckets', () => {
  test('OpenAI counts cached tokens inside prompt_tokens: the uncached bucket excludes them', async ({
    assert,
  }) => {
    const app = await agentApp({ wire: 'openai' })
    app.fake.reply({
      text: ['fine'],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 300,
        total_tokens: 1500,
        prompt_tokens_details: { cached_tokens: 1000 },
        completion_tokens_details: { reasoning_tokens: 120 },
      },
    })
    const { frames, usage } = await runOnce(app)
    assert.deepEqual(deltasOf(frames), ['fine'])
    assert.equal(app.fake.requests[0].body.stream_options?.include_usage, true)
    assert.lengthOf(usage, 1)
    assert.deepEqual(buckets(usage[0]), {
      known: true,
      uncachedInputTokens: 200,
      cacheReadTokens: 1000,
      cacheWriteTokens: 0,
      outputTokens: 180,
      reasoningTokens: 120,
    })
    assert.include(usage[0], { kind: 'step', step: 1, actorRef: 'alice', agentName: 'default' })
    assert.equal(usage[0].model, 'fake.chat:fake-model')
    assert.match(usage[0].day, /^\d{4}-\d{2}-\d{2}$/)
  })

  test('Anthropic reports cache reads and writes beside input_tokens: each lands in its own bucket', async ({
    assert,
  }) => {
    const app = await agentApp({ wire: 'anthropic' })
    app.fake.reply({
      text: ['Hel', 'lo'],
      usage: {
        input_tokens: 40,
        cache_creation_input_tokens: 500,
        cache_read_input_tokens: 2000,
        output_tokens: 1,
        outputTokens: 75,
      },
    })
    const { frames, usage } = await runOnce(app)
    assert.deepEqual(deltasOf(frames), ['Hel', 'lo'])
    assert.equal(app.fake.requests[0].path, '/v1/messages')
    assert.deepEqual(buckets(usage[0]), {
      known: true,
      uncachedInputTokens: 40,
      cacheReadTokens: 2000,
      cacheWriteTokens: 500,
      outputTokens: 75,
      reasoningTokens: 0,
    })
  })

  test('a provider that reports no usage is recorded with usageKnown false and zero buckets', async ({
    assert,
  }) => {
    const app = await agentApp({ wire: 'openai', includeUsage: false })
    app.fake.reply({ text: ['no usage'] })
    const { usage } = await runOnce(app)
    assert.isUndefined(app.fake.requests[0].body.stream_options)
    assert.deepEqual(buckets(usage[0]), {
      known: false,
      uncachedInputTokens: 0,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
    })
  })

  test('an Anthropic tool round trip records one usage row per model call', async ({ assert }) => {
    const app = await agentApp({
      wire: 'anthropic',
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
      {
        toolCalls: [{ id: 'toolu_1', name: 'echo', input: { say: 'hi' } }],
        usage: { input_tokens: 10, output_tokens: 1, outputTokens: 20 },
      },
      { text: ['done'], usage: { input_tokens: 30, output_tokens: 1, outputTokens: 4 } }
    )
    const { usage } = await runOnce(app)
    assert.deepEqual(
      usage.map((row) => [row.step, row.uncachedInputTokens, row.outputTokens]),
      [
        [1, 10, 20],
        [2, 30, 4],
      ]
    )
    const toolResult = app.fake.requests[1].body.messages
      .flatMap((message: any) => (Array.isArray(message.content) ? message.content : []))
      .find((part: any) => part.type === 'tool_result')
    assert.equal(toolResult.tool_use_id, 'toolu_1')
    assert.deepEqual(JSON.parse(toolResult.content[0]?.text ?? toolResult.content), {
      echoed: { say: 'hi' },
    })
  })
})
