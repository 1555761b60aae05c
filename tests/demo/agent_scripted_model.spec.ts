import { test } from '@japa/runner'
import { request as httpRequest } from 'node:http'
import { ScriptedModelServer } from '../../examples/demo/features/agent_scripted_model.ts'
import { demoModel } from '../../examples/demo/features/agent_model.ts'

/**
 * The demo's scripted model as a client of the OpenAI chat-completions wire
 * format sees it, and the AGENT_MODEL switch.
 */

/** The chunks of one streamed completion, parsed; `[DONE]` ends it */
async function complete(url: string, body: unknown) {
  const response = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  const data = text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6))
  return {
    status: response.status,
    done: data.at(-1) === '[DONE]',
    chunks: data.slice(0, -1).map((line) => JSON.parse(line)),
  }
}

const refundTool = { type: 'function', function: { name: 'refund_order', parameters: {} } }

test.group('Demo scripted model', (group) => {
  let model: ScriptedModelServer
  let url: string
  group.each.setup(async () => {
    model = new ScriptedModelServer()
    url = await model.start()
    return () => model.close()
  })

  test('a message streams back as text deltas, then the usage asked for', async ({ assert }) => {
    const { status, done, chunks } = await complete(url, {
      model: 'demo-scripted',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hello there' }],
    })
    assert.equal(status, 200)
    assert.isTrue(done)
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')
    assert.include(text, 'Scripted answer to “hello there”')
    assert.isAbove(chunks.filter((chunk) => chunk.choices[0]?.delta?.content).length, 5)
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'stop')
    assert.isAbove(chunks.at(-1).usage.prompt_tokens, 0)
    assert.equal(
      chunks.at(-1).usage.total_tokens,
      chunks.at(-1).usage.prompt_tokens + chunks.at(-1).usage.completion_tokens
    )
  })

  test('a refund request calls the refund tool with the order and amount named', async ({
    assert,
  }) => {
    const { chunks } = await complete(url, {
      stream: true,
      stream_options: { include_usage: false },
      tools: [refundTool],
      messages: [{ role: 'user', content: 'Please refund order #2048, 12.50 USD' }],
    })
    const call = chunks.find((chunk) => chunk.choices[0]?.delta?.tool_calls)
    assert.exists(call)
    const [toolCall] = call.choices[0].delta.tool_calls
    assert.equal(toolCall.function.name, 'refund_order')
    assert.deepInclude(JSON.parse(toolCall.function.arguments), { orderId: 2048, amount: 12.5 })
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'tool_calls')
    // no usage chunk unless the client asked for one, as OpenAI does
    assert.notExists(chunks.at(-1).usage)
  })

  test('without the refund tool declared, a refund request is answered in text', async ({
    assert,
  }) => {
    const { chunks } = await complete(url, {
      stream: true,
      messages: [{ role: 'user', content: 'refund order 2048' }],
    })
    assert.notExists(chunks.find((chunk) => chunk.choices[0]?.delta?.tool_calls))
  })

  test('a tool result becomes the answer: approved or rejected', async ({ assert }) => {
    const answer = async (output: unknown) => {
      const { chunks } = await complete(url, {
        stream: true,
        messages: [
          { role: 'user', content: 'refund order 2048' },
          { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify(output) },
        ],
      })
      return chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')
    }
    assert.include(
      await answer({
        refundId: 're_1',
        orderId: 2048,
        amount: 5,
        currency: 'USD',
        status: 'refunded',
      }),
      'Done: refund re_1 of 5 USD for order #2048 was approved and issued.'
    )
    assert.include(await answer({ error: 'rejected', message: 'no' }), 'The refund was rejected')
  })

  test('bad requests get an error status and the server keeps answering', async ({ assert }) => {
    const badJson = await fetch(`${url}/chat/completions`, { method: 'POST', body: '{nope' })
    assert.equal(badJson.status, 400)
    const wrongPath = await fetch(`${url}/models`)
    assert.equal(wrongPath.status, 404)
    const tooLarge = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      body: 'x'.repeat(5 * 1024 * 1024),
    })
    assert.equal(tooLarge.status, 413)
    const { status } = await complete(url, { stream: true, messages: [] })
    assert.equal(status, 200)
  })

  test('a client that goes away mid-stream leaves the server answering', async ({ assert }) => {
    const { port } = new URL(url)
    await new Promise<void>((resolve, reject) => {
      const request = httpRequest(
        { host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST' },
        (response) => {
          response.once('data', () => {
            request.destroy()
            resolve()
          })
        }
      )
      request.on('error', () => {})
      request.once('error', reject)
      request.end(
        JSON.stringify({ stream: true, messages: [{ role: 'user', content: 'a long story' }] })
      )
    })
    const { status, done } = await complete(url, { stream: true, messages: [] })
    assert.equal(status, 200)
    assert.isTrue(done)
  })
})

test.group('Demo AGENT_MODEL', () => {
  test('unset is the scripted model; openai and anthropic name their packages', ({ assert }) => {
    const scripted = demoModel({})
    assert.isTrue(scripted.scripted)
    assert.include(scripted.label, 'scripted')
    assert.equal(scripted.model.packageName, '@ai-sdk/openai-compatible')

    const openai = demoModel({ AGENT_MODEL: 'openai:gpt-4o-mini', OPENAI_API_KEY: 'sk-test' })
    assert.isFalse(openai.scripted)
    assert.equal(openai.label, 'openai:gpt-4o-mini')
    assert.equal(openai.model.packageName, '@ai-sdk/openai-compatible')

    const anthropic = demoModel({
      AGENT_MODEL: 'anthropic:claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-test',
    })
    assert.equal(anthropic.model.packageName, '@ai-sdk/anthropic')
  })

  test('a real model without its key, or an unknown value, names the fix', ({ assert }) => {
    assert.throws(() => demoModel({ AGENT_MODEL: 'openai:gpt-4o-mini' }), /needs OPENAI_API_KEY/)
    assert.throws(
      () => demoModel({ AGENT_MODEL: 'anthropic:claude-sonnet-4-5' }),
      /needs ANTHROPIC_API_KEY/
    )
    assert.throws(
      () => demoModel({ AGENT_MODEL: 'mistral:large' }),
      /Invalid AGENT_MODEL "mistral:large"/
    )
    assert.throws(() => demoModel({ AGENT_MODEL: 'openai:' }), /Invalid AGENT_MODEL/)
  })
})
