import { test } from '@japa/runner'
import type { HttpContext } from '@adonisjs/core/http'
import { actors, agent, defineConfig, systemPrompt } from '../../src/agent/main.ts'
import type { AgentConfigInput, ModelPort } from '../../src/agent/main.ts'
import { setupApp } from '../helpers.ts'
import { agentApp, deltasOf, errorOf, statusOf } from './helpers.ts'

/** A model port that is never called: config validation happens before any model call */
const idleModel: ModelPort = {
  label: 'idle',
  async *streamStep() {
    throw new Error('not called')
  },
}

const base: AgentConfigInput = { model: idleModel, actorResolver: actors.header() }

class PlainClass {}

@agent({ name: 'twin', description: 'One' })
class TwinOne {}

@agent({ name: 'twin', description: 'Two' })
class TwinTwo {}

@agent({ name: 'scoped', description: 'Scoped', tools: ['missing'] })
class ScopedAgent {}

@agent({ name: 'terse', description: 'Terse', maxOutputTokens: -5 })
class TerseAgent {}

@agent({ name: 'pirate', description: 'Arr', systemPrompt: 'flat prompt, overridden' })
class PirateAgent {
  @systemPrompt()
  prompt(context: { actor: { id: string } }) {
    return `Speak like a pirate. The user is ${context.actor.id}.`
  }
}

test.group('Agent config', () => {
  const cases: Array<[string, Partial<AgentConfigInput> & Record<string, unknown>, string]> = [
    [
      'durable without the durable module',
      { durable: true },
      '"durable: true" in config/agent.ts needs the durable module and a configured durable engine, which this version of adonis-atrium does not include. Remove durable (and dispatchedSteps)',
    ],
    [
      'dispatchedSteps without durable',
      { dispatchedSteps: true },
      '"dispatchedSteps: true" in config/agent.ts needs "durable: true": dispatched steps only exist in durable runs. Remove dispatchedSteps or set durable: true',
    ],
    [
      'a missing model',
      { model: undefined as any },
      "Missing \"model\" in config/agent.ts. Set an AI SDK model, for example model: models.anthropic('claude-sonnet-4-5', { apiKey: env.get('ANTHROPIC_API_KEY') })",
    ],
    [
      'a missing actorResolver',
      { actorResolver: undefined as any },
      'Missing "actorResolver" in config/agent.ts. Use actors.auth() with @adonisjs/auth, or your own (ctx) => ({ id, roles }): no default fabricates a caller',
    ],
    [
      'an agent class without @agent()',
      { agents: [PlainClass] },
      'Invalid "agents[0]" in config/agent.ts: class PlainClass is not decorated with @agent({ name, description }) from adonis-atrium/agent',
    ],
    [
      'two agents with one name',
      { agents: [TwinOne, TwinTwo] },
      'Two agents are named "twin" in "agents" of config/agent.ts: agent names must be unique',
    ],
    [
      'an agent listing an unknown tool',
      { agents: [ScopedAgent] },
      'Agent "scoped" lists tool "missing", which is not in "tools" of config/agent.ts. Add the tool or remove it from the agent\'s tools',
    ],
    [
      'an unknown defaultAgent',
      { agents: [], defaultAgent: 'ghost' },
      '"defaultAgent" in config/agent.ts is "ghost", which is not one of the agents: default',
    ],
    [
      'a quota that is not a quota store',
      { quota: {} as any },
      'Invalid "quota" in config/agent.ts: expected quotas.redis({ connection: \'main\', limitTokens }), quotas.lucid({ limitTokens }) or an object with reserve, settle, release and used',
    ],
    [
      'an unknown quotaTimeZone',
      { quotaTimeZone: 'Mars/Olympus_Mons' },
      "Unknown time zone \"Mars/Olympus_Mons\" in \"quotaTimeZone\" of config/agent.ts. Use an IANA name such as 'UTC', 'Europe/Paris' or 'America/Sao_Paulo' (Intl.supportedValuesOf('timeZone') lists them)",
    ],
    [
      'a quotaHoldLeaseMs longer than a day',
      { quotaHoldLeaseMs: 90_000_000 },
      'Invalid "quotaHoldLeaseMs" in config/agent.ts: expected an integer from 1 to 86400000, received 90000000',
    ],
    [
      'a zero maxOutputTokens',
      { maxOutputTokens: 0 },
      'Invalid "maxOutputTokens" in config/agent.ts: expected a positive integer, received 0',
    ],
    [
      'an agent with a negative maxOutputTokens',
      { agents: [TerseAgent] },
      'Invalid "maxOutputTokens" of agent "terse" in config/agent.ts: expected a positive integer, received -5',
    ],
    [
      'a zero toolTimeoutMs',
      { toolTimeoutMs: 0 },
      'Invalid "toolTimeoutMs" in config/agent.ts: expected a positive integer, received 0',
    ],
  ]
  for (const [name, options, message] of cases) {
    test(`defineConfig refuses ${name}, naming the option and the fix`, ({ assert }) => {
      assert.throws(() => defineConfig({ ...base, ...options }), message)
    })
  }

  test('the boot names the migration to run when the agent tables are missing', async ({
    assert,
  }) => {
    await assert.rejects(
      () =>
        setupApp({
          database: true,
          providers: [() => import('../../providers/agent_provider.ts')],
          config: { agent: defineConfig(base) },
        }),
      'Missing table "agent_threads" for the agent gateway. Run "node ace configure adonis-atrium --features=agent" to publish its migrations, then "node ace migration:run"'
    )
  })

  test('a missing config/agent.ts stops the boot with the command that creates it', async ({
    assert,
  }) => {
    await assert.rejects(
      () =>
        setupApp({ providers: [() => import('../../providers/agent_provider.ts')], http: false }),
      'Missing config/agent.ts, or it does not export defineConfig() from adonis-atrium/agent. Run "node ace configure adonis-atrium --features=agent"'
    )
  })

  test('a @systemPrompt() method wins over the flat systemPrompt of @agent()', async ({
    assert,
  }) => {
    const { chat, fake } = await agentApp({ config: { agents: [PirateAgent] } })
    const { sse } = await chat({ message: 'ahoy' })
    assert.deepEqual(deltasOf(await sse.rest()), ['ok'])
    assert.deepEqual(fake.requests[0].body.messages[0], {
      role: 'system',
      content: 'Speak like a pirate. The user is alice.',
    })
  })

  test('actors.auth() reads ctx.auth.user and answers 401 without one; middleware runs on every route', async ({
    assert,
  }) => {
    const seen: string[] = []
    const { request } = await agentApp({
      config: {
        actorResolver: actors.auth({ roles: (user) => user.roles }),
        // Stands in for @adonisjs/auth's middleware: it sets ctx.auth
        middleware: [
          async (ctx: HttpContext, next: () => Promise<void>) => {
            seen.push(ctx.request.url())
            const id = ctx.request.header('x-user')
            ;(ctx as any).auth = { user: id ? { id: Number(id), roles: ['ADMIN'] } : undefined }
            await next()
          },
        ],
      },
    })
    const anonymous = await request('GET', '/agents')
    assert.equal(anonymous.status, 401)
    assert.include(await errorOf(anonymous), { code: 'E_AGENT_UNAUTHENTICATED' })
    const listed = await request('GET', '/threads', { id: 'ignored' }, undefined, { 'x-user': '7' })
    assert.equal(listed.status, 200)
    assert.deepEqual(seen, ['/agent/agents', '/agent/threads'])
  })

  test('a lazily imported middleware class guards every route', async ({ assert }) => {
    const { default: ActorMiddleware } = await import('./fixtures/actor_middleware.ts')
    ActorMiddleware.seen = []
    const { request } = await agentApp({
      config: { middleware: [() => import('./fixtures/actor_middleware.ts')] },
    })
    assert.equal(await statusOf(request('GET', '/agents')), 200)
    assert.equal(
      await statusOf(request('POST', '/chat', undefined, { message: 'hi' }, { 'x-blocked': '1' })),
      418
    )
    assert.deepEqual(ActorMiddleware.seen, ['/agent/agents', '/agent/chat'])
    // Headers middleware set through Adonis reach the SSE response too
    const stream = await request('POST', '/chat', undefined, { message: 'hi' })
    assert.equal(stream.headers.get('x-guarded-by'), 'actor-middleware')
    assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8')
    await stream.text()
  })
})
