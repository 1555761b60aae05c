import { test } from '@japa/runner'
import { actors, agent, defineConfig, defineTool } from '../../src/agent/main.ts'
import type { AgentClass, ModelPort } from '../../src/agent/main.ts'
import { agentApp, deltasOf } from './helpers.ts'

/** A model port that is never called: handoffs are checked before any model call */
const idleModel: ModelPort = {
  label: 'idle',
  async *streamStep() {
    throw new Error('not called')
  },
}

/** The system prompt a request to the fake was sent with (OpenAI wire) */
function systemOf(request: { body: any }) {
  return request.body.messages.find((message: any) => message.role === 'system')?.content
}

/** The JSON results of the tool messages a request carried */
function toolResultsOf(request: { body: any }) {
  return request.body.messages
    .filter((message: any) => message.role === 'tool')
    .map((message: any) => JSON.parse(message.content))
}

function counterTool(name: string, roles: string[]) {
  const calls: unknown[] = []
  const tool = defineTool({
    spec: {
      name,
      description: `The ${name} tool`,
      roles,
      inputSchema: {
        type: 'object',
        properties: { amount: { type: 'integer' } },
        required: ['amount'],
      },
    },
    handler(input: { amount: number }) {
      calls.push(input)
      return { total: input.amount * 2 }
    },
  })
  return { tool, calls }
}

@agent({
  name: 'billing',
  description: 'Answers questions about invoices',
  systemPrompt: 'You are the billing agent.',
  model: 'billing-model',
  tools: ['double', 'refund'],
})
class BillingAgent {}

@agent({
  name: 'front',
  description: 'Greets and routes',
  systemPrompt: 'You are the front desk.',
  model: 'front-model',
  tools: [],
  handoff: [BillingAgent],
})
class FrontAgent {}

const CAROL = { id: 'carol', roles: ['USER'] }

test.group('Agent handoff', () => {
  test('a handoff runs the other agent in the same run and its answer is the tool result', async ({
    assert,
  }) => {
    const { tool } = counterTool('double', ['USER'])
    const refund = counterTool('refund', ['ADMIN'])
    const { chat, fake, manager } = await agentApp({
      config: { agents: [FrontAgent, BillingAgent], tools: [tool, refund.tool] },
    })
    fake.reply(
      {
        text: ['Let me ask billing. '],
        toolCalls: [
          { id: 'call_h', name: 'handoff_to_billing', input: { message: 'Is invoice 42 paid?' } },
        ],
      },
      { text: ['Invoice 42 ', 'is paid.'] },
      { text: ['Billing says it is paid.'] }
    )
    const { response, sse } = await chat({ message: 'is 42 paid?', agent: 'front' }, CAROL)
    const frames = await sse.rest()
    const runId = response.headers.get('x-agent-run-id')!

    // The stream keeps meta, deltas, done: the billing agent's text reaches the user through front
    assert.deepEqual(
      frames.map((frame) => frame.event ?? 'delta'),
      ['meta', 'delta', 'delta', 'done']
    )
    assert.deepEqual(deltasOf(frames), ['Let me ask billing. ', 'Billing says it is paid.'])

    // The handoff tool carries the agent's name and description
    const declared = fake.requests[0].body.tools.map((t: any) => t.function)
    assert.deepEqual(
      declared.map((fn: any) => [fn.name, fn.description]),
      [['handoff_to_billing', 'Answers questions about invoices']]
    )
    // The billing agent runs with its own prompt and sees only the task
    assert.equal(systemOf(fake.requests[1]), 'You are the billing agent.')
    assert.deepEqual(
      fake.requests[1].body.messages.filter((message: any) => message.role !== 'system'),
      [{ role: 'user', content: 'Is invoice 42 paid?' }]
    )
    assert.deepEqual(toolResultsOf(fake.requests[2]), ['Invoice 42 is paid.'])
    assert.equal(systemOf(fake.requests[2]), 'You are the front desk.')

    const [row] = await manager.config.store.listToolCalls(runId)
    assert.include(row, { toolName: 'handoff_to_billing', status: 'succeeded' })
    assert.equal(row.output, 'Invoice 42 is paid.')
    const page = await manager.config.store.governance!.toolCallsPage(1, 25, {
      toolType: 'handoff',
    })
    assert.deepEqual(
      page.rows.map((activity) => [activity.toolName, activity.toolType]),
      [['handoff_to_billing', 'handoff']]
    )
    const plain = await manager.config.store.governance!.toolCallsPage(1, 25, { toolType: 'tool' })
    assert.equal(plain.total, 0)

    // The thread keeps front's conversation only; the run counts every step
    const thread = await manager.config.store.listMessages(
      response.headers.get('x-agent-thread-id')!
    )
    assert.deepEqual(
      thread.map((message) => [message.role, message.content]),
      [
        ['user', 'is 42 paid?'],
        ['assistant', 'Let me ask billing. '],
        ['tool', ''],
        ['assistant', 'Billing says it is paid.'],
      ]
    )
    const run = await manager.config.store.findRun(runId)
    assert.include(run, { status: 'done', steps: 3, agentName: 'front' })
  })

  test('usage rows of the handed-off model calls carry that agent and its model label', async ({
    assert,
  }) => {
    const { tool } = counterTool('double', ['USER'])
    const refund = counterTool('refund', ['ADMIN'])
    const { chat, fake, manager } = await agentApp({
      config: { agents: [FrontAgent, BillingAgent], tools: [tool, refund.tool] },
    })
    fake.reply(
      { toolCalls: [{ id: 'call_h', name: 'handoff_to_billing', input: { message: 'sum' } }] },
      { toolCalls: [{ id: 'call_d', name: 'double', input: { amount: 4 } }] },
      { text: ['8'] },
      { text: ['It is 8.'] }
    )
    const { response, sse } = await chat({ message: 'double 4', agent: 'front' }, CAROL)
    await sse.rest()
    const usage = await manager.config.store.listUsage(response.headers.get('x-agent-run-id')!)
    assert.deepEqual(
      usage.map((row) => [row.step, row.agentName, row.model]),
      [
        [1, 'front', 'front-model'],
        [2, 'billing', 'billing-model'],
        [3, 'billing', 'billing-model'],
        [4, 'front', 'front-model'],
      ]
    )
  })

  test("the agent handed a task gets its allow-list cut by the caller's roles, and the gate still denies", async ({
    assert,
  }) => {
    const double = counterTool('double', ['USER'])
    const refund = counterTool('refund', ['ADMIN'])
    const { chat, fake, manager } = await agentApp({
      config: { agents: [FrontAgent, BillingAgent], tools: [double.tool, refund.tool] },
    })
    fake.reply(
      { toolCalls: [{ id: 'call_h', name: 'handoff_to_billing', input: { message: 'refund' } }] },
      { toolCalls: [{ id: 'call_r', name: 'refund', input: { amount: 1 } }] },
      { text: ['I may not refund.'] },
      { text: ['No refund.'] }
    )
    const { response, sse } = await chat({ message: 'refund me', agent: 'front' }, CAROL)
    await sse.rest()
    // billing allows double and refund; carol (USER) only gets double
    assert.deepEqual(
      fake.requests[1].body.tools.map((t: any) => t.function.name),
      ['double']
    )
    assert.deepEqual(refund.calls, [])
    assert.deepEqual(toolResultsOf(fake.requests[2]), [
      { error: 'forbidden', message: 'The caller is not allowed to use the tool "refund"' },
    ])
    const rows = await manager.config.store.listToolCalls(response.headers.get('x-agent-run-id')!)
    assert.deepEqual(
      rows.map((row) => [row.toolName, row.status]),
      [
        ['handoff_to_billing', 'succeeded'],
        ['refund', 'denied'],
      ]
    )

    // A caller with both roles gets both
    fake.reply(
      { toolCalls: [{ id: 'call_h2', name: 'handoff_to_billing', input: { message: 'x' } }] },
      { text: ['ok'] },
      { text: ['ok'] }
    )
    const admin = await chat(
      { message: 'again', agent: 'front' },
      { id: 'dan', roles: ['USER', 'ADMIN'] }
    )
    await admin.sse.rest()
    assert.deepEqual(
      fake.requests[5].body.tools.map((t: any) => t.function.name),
      ['double', 'refund']
    )
  })

  test('a tool call of the handed-off agent waiting for approval is announced on the run and decided by id', async ({
    assert,
  }) => {
    const executed: unknown[] = []
    const refund = defineTool({
      spec: {
        name: 'refund',
        description: 'Refunds an order',
        roles: ['USER'],
        requiresApproval: true,
        inputSchema: { type: 'object', properties: { amount: { type: 'integer' } } },
      },
      handler(input: { amount: number }) {
        executed.push(input)
        return { refunded: input.amount }
      },
    })
    const double = counterTool('double', ['USER'])
    const { chat, fake, manager, request } = await agentApp({
      config: { agents: [FrontAgent, BillingAgent], tools: [double.tool, refund] },
    })
    fake.reply(
      { toolCalls: [{ id: 'call_h', name: 'handoff_to_billing', input: { message: 'refund 5' } }] },
      { toolCalls: [{ id: 'call_r', name: 'refund', input: { amount: 5 } }] },
      { text: ['Refunded 5.'] },
      { text: ['Your 5 are refunded.'] }
    )
    const { response, sse } = await chat({ message: 'refund 5', agent: 'front' }, CAROL)
    const frames = await sse.until((frame) => frame.event === 'approval')
    assert.deepEqual(frames.at(-1)?.data, {
      toolCallId: 'call_r',
      toolName: 'refund',
      input: { amount: 5 },
    })
    assert.deepEqual(executed, [])
    const approved = await request('POST', '/tool-call/approve', CAROL, { toolCallId: 'call_r' })
    assert.deepEqual(await approved.json(), { ok: true })
    const rest = await sse.rest()
    assert.deepEqual(deltasOf(rest), ['Your 5 are refunded.'])
    assert.deepEqual(executed, [{ amount: 5 }])
    const rows = await manager.config.store.listToolCalls(response.headers.get('x-agent-run-id')!)
    assert.deepEqual(
      rows.map((row) => [row.toolName, row.status]),
      [
        ['handoff_to_billing', 'succeeded'],
        ['refund', 'succeeded'],
      ]
    )
  })

  test('the handed-off agent spends the run-wide step budget: the caller gets no fresh steps', async ({
    assert,
  }) => {
    @agent({ name: 'worker', description: 'Works', tools: ['double'], maxSteps: 8 })
    class Worker {}
    @agent({ name: 'boss', description: 'Delegates', tools: [], maxSteps: 3, handoff: [Worker] })
    class Boss {}
    const double = counterTool('double', ['USER'])
    const { chat, fake, manager } = await agentApp({
      config: { agents: [Boss, Worker], tools: [double.tool] },
    })
    fake.reply(
      { toolCalls: [{ id: 'call_h', name: 'handoff_to_worker', input: { message: 'go' } }] },
      { toolCalls: [{ id: 'call_1', name: 'double', input: { amount: 1 } }] },
      { toolCalls: [{ id: 'call_2', name: 'double', input: { amount: 2 } }] },
      { text: ['never asked'] }
    )
    const { response, sse } = await chat({ message: 'work', agent: 'boss' }, CAROL)
    const frames = await sse.rest()
    const runId = response.headers.get('x-agent-run-id')!
    assert.equal(frames.at(-1)?.event, 'done')
    // boss's maxSteps (3) bounds the run: one boss step, two worker steps, nothing more
    assert.equal(fake.requests.length, 3)
    assert.deepEqual(double.calls, [{ amount: 1 }])
    const rows = await manager.config.store.listToolCalls(runId)
    assert.deepEqual(
      rows.map((row) => [row.toolCallId, row.status, row.errorCode]),
      [
        ['call_h', 'failed', 'max_steps'],
        ['call_1', 'succeeded', null],
        ['call_2', 'skipped', 'max_steps'],
      ]
    )
    const run = await manager.config.store.findRun(runId)
    assert.include(run, { status: 'done', steps: 3 })
  })

  test('a handoff beyond depth 5 answers the model a structured refusal and the run goes on', async ({
    assert,
  }) => {
    // a0 → a1 → ... → a6: the handoff to a6 would be depth 6
    const chain: AgentClass[] = []
    for (let index = 6; index >= 0; index--) {
      const next = chain[0]
      @agent({
        name: `a${index}`,
        description: `Agent ${index}`,
        systemPrompt: `You are a${index}.`,
        tools: [],
        maxSteps: 20,
        handoff: next ? [next] : [],
      })
      class Link {}
      chain.unshift(Link)
    }
    const { chat, fake, manager } = await agentApp({ config: { agents: chain } })
    for (let index = 0; index < 6; index++) {
      fake.reply({
        toolCalls: [
          { id: `call_${index}`, name: `handoff_to_a${index + 1}`, input: { message: 'deeper' } },
        ],
      })
    }
    fake.reply(
      { text: ['a5 answers alone'] },
      { text: ['a4'] },
      { text: ['a3'] },
      { text: ['a2'] },
      { text: ['a1'] },
      { text: ['a0 done'] }
    )
    const { response, sse } = await chat({ message: 'dive', agent: 'a0' })
    const frames = await sse.rest()
    assert.equal(frames.at(-1)?.event, 'done')
    assert.deepEqual(deltasOf(frames), ['a0 done'])
    assert.lengthOf(fake.requests, 12)
    assert.deepEqual(
      fake.requests.map(systemOf),
      ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a5', 'a4', 'a3', 'a2', 'a1', 'a0'].map(
        (name) => `You are ${name}.`
      )
    )
    assert.deepEqual(toolResultsOf(fake.requests[6]), [
      {
        error: 'max_delegation_depth',
        message: 'Handoffs nest at most 5 deep: answer without the agent "a6"',
      },
    ])
    assert.deepEqual(toolResultsOf(fake.requests[7]), ['a5 answers alone'])
    const rows = await manager.config.store.listToolCalls(response.headers.get('x-agent-run-id')!)
    assert.deepEqual(
      rows.map((row) => [row.toolName, row.status, row.errorCode]),
      [
        ['handoff_to_a1', 'succeeded', null],
        ['handoff_to_a2', 'succeeded', null],
        ['handoff_to_a3', 'succeeded', null],
        ['handoff_to_a4', 'succeeded', null],
        ['handoff_to_a5', 'succeeded', null],
        ['handoff_to_a6', 'failed', 'max_delegation_depth'],
      ]
    )
  })

  test('a handoff cycle stops the boot naming the cycle and the option', ({ assert }) => {
    @agent({ name: 'ping', description: 'Ping', handoff: [() => Pong] })
    class Ping {}
    @agent({ name: 'pong', description: 'Pong', handoff: [Ping] })
    class Pong {}
    assert.throws(
      () =>
        defineConfig({ model: idleModel, actorResolver: actors.header(), agents: [Ping, Pong] }),
      'Agents hand off in a cycle: ping → pong → ping (the "handoff" option of @agent()). A handoff must never lead back to an agent of its own chain: remove one of these handoffs'
    )

    @agent({ name: 'x', description: 'X', handoff: [() => Y] })
    class X {}
    @agent({ name: 'y', description: 'Y', handoff: [() => Z] })
    class Y {}
    @agent({ name: 'z', description: 'Z', handoff: [X] })
    class Z {}
    @agent({ name: 'entry', description: 'Entry', handoff: [Y] })
    class Entry {}
    assert.throws(
      () =>
        defineConfig({
          model: idleModel,
          actorResolver: actors.header(),
          agents: [Entry, X, Y, Z],
        }),
      /Agents hand off in a cycle: y → z → x → y \(the "handoff" option of @agent\(\)\)/
    )

    @agent({ name: 'narcissus', description: 'Self', handoff: [() => Narcissus] })
    class Narcissus {}
    assert.throws(
      () => defineConfig({ model: idleModel, actorResolver: actors.header(), agents: [Narcissus] }),
      /Agents hand off in a cycle: narcissus → narcissus/
    )
  })

  test('a handoff to a class that is not an agent, or not registered, stops the boot', ({
    assert,
  }) => {
    class Plain {}
    @agent({ name: 'lost', description: 'Lost', handoff: [Plain as AgentClass] })
    class Lost {}
    assert.throws(
      () => defineConfig({ model: idleModel, actorResolver: actors.header(), agents: [Lost] }),
      'Invalid "handoff[0]" of agent "lost": class Plain is not decorated with @agent({ name, description }) from adonis-atrium/agent'
    )
    const early = () => {
      throw new Error('Cannot access it before initialization')
    }
    @agent({ name: 'early', description: 'Early', handoff: [early] })
    class Early {}
    assert.throws(
      () => defineConfig({ model: idleModel, actorResolver: actors.header(), agents: [Early] }),
      'Invalid "handoff[0]" of agent "early": the function returning the agent class threw (Cannot access it before initialization). Return a class declared before the config is read'
    )
    @agent({ name: 'caller', description: 'Caller', handoff: [BillingAgent] })
    class Caller {}
    assert.throws(
      () => defineConfig({ model: idleModel, actorResolver: actors.header(), agents: [Caller] }),
      /Agent "caller" hands off to "billing" \(class BillingAgent\), which is not one of the agents/
    )
    assert.throws(
      () =>
        defineConfig({
          model: idleModel,
          actorResolver: actors.header(),
          tools: [counterTool('handoff_to_x', ['USER']).tool],
        }),
      /Invalid tool name "handoff_to_x" in "tools" of config\/agent.ts/
    )
  })
})
