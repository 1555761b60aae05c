import { test } from '@japa/runner'
import vine from '@vinejs/vine'
import { agent, defineTool } from '../../src/agent/main.ts'
import { agentApp, deltasOf } from './helpers.ts'

/** A service the class tool gets from the container */
class WeatherService {
  calls: string[] = []
  forecast(city: string) {
    this.calls.push(city)
    return { city, sky: 'clear' }
  }
}

/**
 * A class tool; apps put @inject() on it (with reflect-metadata loaded by
 * bin/server.ts). Here the container gets a factory binding instead, which
 * proves the gateway makes the class through the container.
 */
class ForecastTool {
  static spec = {
    name: 'forecast',
    description: 'Forecast for a city',
    inputSchema: vine.compile(vine.object({ city: vine.string().minLength(2) })),
    roles: ['USER', 'ADMIN'],
  }
  constructor(protected weather: WeatherService) {}
  handle(input: { city: string }) {
    return this.weather.forecast(input.city)
  }
}

function counterTool(name: string, roles?: string[]) {
  const calls: unknown[] = []
  const tool = defineTool({
    spec: {
      name,
      description: `The ${name} tool`,
      roles,
      inputSchema: {
        type: 'object',
        properties: { amount: { type: 'integer', minimum: 1 } },
        required: ['amount'],
        additionalProperties: false,
      },
    },
    handler(input: { amount: number }) {
      calls.push(input)
      return { total: input.amount * 2 }
    },
  })
  return { tool, calls }
}

@agent({ name: 'clerk', description: 'Does sums', tools: ['double', 'forecast'], maxSteps: 4 })
class ClerkAgent {}

test.group('Agent tools', () => {
  test('a tool call streamed in argument fragments runs once and its result feeds the next step', async ({
    assert,
  }) => {
    const { tool, calls } = counterTool('double', ['USER'])
    const { chat, fake, manager } = await agentApp({ config: { tools: [tool] } })
    fake.reply(
      {
        text: ['Let me check. '],
        toolCalls: [{ id: 'call_1', name: 'double', input: { amount: 21 } }],
      },
      { text: ['It is 42.'] }
    )
    const { response, sse } = await chat({ message: 'double 21' }, { id: 'carol', roles: ['USER'] })
    const frames = await sse.rest()
    assert.deepEqual(deltasOf(frames), ['Let me check. ', 'It is 42.'])
    assert.equal(frames.at(-1)?.event, 'done')
    assert.deepEqual(calls, [{ amount: 21 }])

    // The tool was declared without execute; the second request carries its result
    assert.equal(fake.requests[0].body.tools[0].function.name, 'double')
    const followUp = fake.requests[1].body.messages
    const toolMessage = followUp.find((message: any) => message.role === 'tool')
    assert.equal(toolMessage.tool_call_id, 'call_1')
    assert.deepEqual(JSON.parse(toolMessage.content), { total: 42 })

    const runId = response.headers.get('x-agent-run-id')!
    const [row] = await manager.config.store.listToolCalls(runId)
    assert.include(row, { toolCallId: 'call_1', toolName: 'double', status: 'succeeded' })
    assert.deepEqual(row.output, { total: 42 })
  })

  test('a class tool is made by the container with its dependencies, through an agent allow-list', async ({
    assert,
  }) => {
    const { tool } = counterTool('double', ['USER'])
    const other = counterTool('secret', ['USER'])
    const { app, chat, fake } = await agentApp({
      config: { tools: [tool, ForecastTool, other.tool], agents: [ClerkAgent] },
    })
    const weather = new WeatherService()
    app.container.bind(ForecastTool, () => new ForecastTool(weather))
    fake.reply(
      { toolCalls: [{ id: 'call_f', name: 'forecast', input: { city: 'Lisbon' } }] },
      { text: ['Clear in Lisbon.'] }
    )
    const { sse } = await chat({ message: 'weather?' }, { id: 'carol', roles: ['USER'] })
    await sse.rest()
    assert.deepEqual(weather.calls, ['Lisbon'])
    // The allow-list of the agent hides the "secret" tool from the model
    assert.sameMembers(
      fake.requests[0].body.tools.map((declared: any) => declared.function.name),
      ['double', 'forecast']
    )
  })

  test('an input that fails its schema never reaches the handler and the model is told why', async ({
    assert,
  }) => {
    const { tool, calls } = counterTool('double', ['USER'])
    const { chat, fake } = await agentApp({ config: { tools: [tool] } })
    fake.reply(
      { toolCalls: [{ id: 'call_bad', name: 'double', input: { amount: 0 } }] },
      { text: ['Sorry.'] }
    )
    const { sse } = await chat({ message: 'double 0' }, { id: 'carol', roles: ['USER'] })
    await sse.rest()
    assert.deepEqual(calls, [])
    const toolMessage = fake.requests[1].body.messages.find((m: any) => m.role === 'tool')
    assert.deepEqual(JSON.parse(toolMessage.content), {
      error: 'invalid_input',
      message: 'input.amount must be >= 1',
    })
  })

  test('the roles policy denies a tool the actor may not use: not declared, not run, recorded denied', async ({
    assert,
  }) => {
    const { tool, calls } = counterTool('double') // no roles: defaultRoles ['ADMIN'] apply
    const { chat, fake, manager } = await agentApp({ config: { tools: [tool] } })
    fake.reply(
      { toolCalls: [{ id: 'call_x', name: 'double', input: { amount: 2 } }] },
      { text: ['Not allowed.'] }
    )
    const { response, sse } = await chat({ message: 'double 2' }, { id: 'dave', roles: ['USER'] })
    const frames = await sse.rest()
    assert.equal(frames.at(-1)?.event, 'done')
    assert.deepEqual(calls, [])
    assert.isUndefined(fake.requests[0].body.tools)
    const toolMessage = fake.requests[1].body.messages.find((m: any) => m.role === 'tool')
    assert.deepEqual(JSON.parse(toolMessage.content), {
      error: 'forbidden',
      message: 'The caller is not allowed to use the tool "double"',
    })
    const [row] = await manager.config.store.listToolCalls(response.headers.get('x-agent-run-id')!)
    assert.include(row, { status: 'denied', errorCode: 'forbidden' })
  })

  test('a tool running past toolTimeoutMs is aborted, recorded failed, and the model gets the timeout', async ({
    assert,
  }) => {
    let aborted: Promise<void> | undefined
    const slow = defineTool({
      spec: { name: 'slow', description: 'Never finishes', roles: ['USER'] },
      handler(_input: unknown, context) {
        aborted = new Promise((resolve) =>
          context.signal.addEventListener('abort', () => resolve())
        )
        return new Promise(() => {})
      },
    })
    const { chat, fake, manager } = await agentApp({ config: { tools: [slow], toolTimeoutMs: 50 } })
    fake.reply(
      { toolCalls: [{ id: 'call_slow', name: 'slow', input: {} }] },
      { text: ['It timed out.'] }
    )
    const { response, sse } = await chat({ message: 'go' }, { id: 'carol', roles: ['USER'] })
    const frames = await sse.rest()
    assert.deepEqual(deltasOf(frames), ['It timed out.'])
    await aborted
    const toolMessage = fake.requests[1].body.messages.find((m: any) => m.role === 'tool')
    assert.deepEqual(JSON.parse(toolMessage.content), {
      error: 'tool_timeout',
      message: 'The tool "slow" did not finish within 50 ms',
    })
    const [row] = await manager.config.store.listToolCalls(response.headers.get('x-agent-run-id')!)
    assert.include(row, { status: 'failed', errorCode: 'timeout' })
  })

  test('a tool-call id the model repeats is answered from the record and never runs twice', async ({
    assert,
  }) => {
    const { tool, calls } = counterTool('double', ['USER'])
    const { chat, fake } = await agentApp({ config: { tools: [tool] } })
    fake.reply(
      { toolCalls: [{ id: 'call_same', name: 'double', input: { amount: 5 } }] },
      { toolCalls: [{ id: 'call_same', name: 'double', input: { amount: 5 } }] },
      { text: ['10.'] }
    )
    const { sse } = await chat({ message: 'double 5' }, { id: 'carol', roles: ['USER'] })
    await sse.rest()
    assert.deepEqual(calls, [{ amount: 5 }])
    assert.equal(fake.requests.length, 3)
    const results = fake.requests[2].body.messages.filter((m: any) => m.role === 'tool')
    assert.deepEqual(
      results.map((m: any) => JSON.parse(m.content)),
      [{ total: 10 }, { total: 10 }]
    )
  })

  test('maxSteps caps the model calls of a turn; calls of the last step are recorded skipped', async ({
    assert,
  }) => {
    const { tool, calls } = counterTool('double', ['USER'])
    const { chat, fake, manager } = await agentApp({ config: { tools: [tool], maxSteps: 2 } })
    fake.reply(
      { toolCalls: [{ id: 'call_1', name: 'double', input: { amount: 1 } }] },
      { toolCalls: [{ id: 'call_2', name: 'double', input: { amount: 2 } }] },
      { text: ['never asked'] }
    )
    const { response, sse } = await chat({ message: 'loop' }, { id: 'carol', roles: ['USER'] })
    const frames = await sse.rest()
    assert.equal(frames.at(-1)?.event, 'done')
    assert.equal(fake.requests.length, 2)
    assert.deepEqual(calls, [{ amount: 1 }])
    const rows = await manager.config.store.listToolCalls(response.headers.get('x-agent-run-id')!)
    assert.deepEqual(
      rows.map((row) => [row.toolCallId, row.status]),
      [
        ['call_1', 'succeeded'],
        ['call_2', 'skipped'],
      ]
    )
    const run = await manager.config.store.findRun(response.headers.get('x-agent-run-id')!)
    assert.equal(run?.steps, 2)
  })
})
