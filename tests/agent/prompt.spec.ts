import { test } from '@japa/runner'
import { actors, agent, defineConfig, systemPromptContributor } from '../../src/agent/main.ts'
import type { SystemPromptContext } from '../../src/agent/types.ts'
import { ALICE, agentApp, bodyOf, errorOf } from './helpers.ts'

@agent({ name: 'helper', description: 'Helps', systemPrompt: 'You help.' })
class HelperAgent {}

/** A contributor class, made through the container for every turn */
class ShopContext {
  static seen: SystemPromptContext[] = []

  @systemPromptContributor()
  section(context: SystemPromptContext) {
    ShopContext.seen.push(context)
    return `The shop is open. You talk to ${context.actor.id}.`
  }
}

/** The system prompt and the non-system messages of the model's last request */
function lastRequest(app: Awaited<ReturnType<typeof agentApp>>) {
  const messages = app.fake.requests.at(-1)!.body.messages as Array<{
    role: string
    content: string
  }>
  return {
    system: messages.find((message) => message.role === 'system')?.content,
    rest: messages.filter((message) => message.role !== 'system'),
  }
}

const model = { label: 'x', streamStep: async function* () {} }

test.group('Agent system prompt contributors and pageContext', () => {
  test('contributors append their sections after the agent prompt, in config order', async ({
    assert,
  }) => {
    ShopContext.seen = []
    const app = await agentApp({
      config: {
        agents: [HelperAgent],
        systemPromptContributors: [
          ShopContext,
          () => null,
          ({ agentName }) => `  Agent: ${agentName}.  `,
        ],
      },
    })
    const { response, sse } = await app.chat({ message: 'Hi' })
    await sse.rest()
    const threadId = response.headers.get('x-agent-thread-id')!
    assert.equal(
      lastRequest(app).system,
      'You help.\n\nThe shop is open. You talk to alice.\n\nAgent: helper.'
    )
    assert.lengthOf(ShopContext.seen, 1)
    assert.include(ShopContext.seen[0], { threadId, agentName: 'helper' })
    assert.equal(ShopContext.seen[0].actor.id, 'alice')
    assert.isUndefined(ShopContext.seen[0].pageContext)
  })

  test('pageContext reaches the model with the turn question only, is never stored, and contributors see it', async ({
    assert,
  }) => {
    ShopContext.seen = []
    const app = await agentApp({ config: { systemPromptContributors: [ShopContext] } })
    const pageContext = { url: '/invoices/42', title: 'Invoice 42', lines: [{ sku: 'A', qty: 2 }] }
    app.fake.reply({ text: ['It is invoice 42.'] }, { text: ['Sure.'] })
    const first = await app.chat({ message: 'Which invoice?', pageContext })
    await first.sse.rest()
    const threadId = first.response.headers.get('x-agent-thread-id')!

    const sent = lastRequest(app)
    assert.deepEqual(sent.rest, [
      {
        role: 'user',
        content: `Which invoice?\n\n<page_context>\n${JSON.stringify(pageContext)}\n</page_context>`,
      },
    ])
    // Client data stays out of the system prompt unless a contributor puts it there
    assert.notInclude(sent.system!, 'invoices/42')
    assert.deepEqual(ShopContext.seen[0].pageContext, pageContext)

    const detail = await bodyOf(await app.request('GET', `/threads/${threadId}`))
    assert.equal(detail.messages[0].content, 'Which invoice?')

    // The next turn sends its own context (none): the earlier one is gone from the history
    const second = await app.chat({ message: 'Thanks', threadId })
    await second.sse.rest()
    assert.deepEqual(
      lastRequest(app).rest.map((message) => message.content),
      ['Which invoice?', 'It is invoice 42.', 'Thanks']
    )
  })

  test('a pageContext over maxPageContextBytes, or not an object, answers 400 before anything runs', async ({
    assert,
  }) => {
    const app = await agentApp({ config: { maxPageContextBytes: 64 } })
    const cases: Array<[unknown, string]> = [
      [{ text: 'x'.repeat(60) }, '"pageContext" is larger than 64 bytes of JSON'],
      // 38 characters but 68 bytes: the cap counts bytes
      [{ t: 'é'.repeat(30) }, '"pageContext" is larger than 64 bytes of JSON'],
      [['a', 'list'], '"pageContext" must be a JSON object'],
      ['a string', '"pageContext" must be a JSON object'],
    ]
    for (const [pageContext, message] of cases) {
      const { response } = await app.chat({ message: 'Hi', pageContext })
      assert.equal(response.status, 400)
      assert.deepEqual(await errorOf(response), {
        code: 'E_AGENT_INVALID_REQUEST',
        message,
        field: 'pageContext',
      })
    }
    // 64 bytes exactly is accepted
    const fits = await app.chat({ message: 'Hi', pageContext: { t: 'x'.repeat(56) } })
    assert.equal(fits.response.status, 200)
    await fits.sse.rest()
    const threads = await bodyOf(await app.request('GET', '/threads', ALICE))
    assert.lengthOf(threads, 1)
    assert.lengthOf(app.fake.requests, 1)
  })

  test('a contributor that throws fails the run with run_failed', async ({ assert }) => {
    const app = await agentApp({
      config: {
        systemPromptContributors: [
          () => {
            throw new Error('catalog down')
          },
        ],
      },
    })
    const { sse } = await app.chat({ message: 'Hi' })
    const frames = await sse.rest()
    assert.deepEqual(frames.at(-1)?.data, { code: 'run_failed', message: 'The run failed' })
    assert.lengthOf(app.fake.requests, 0)
  })

  test('defineConfig names a contributor that is neither a function nor a decorated class', ({
    assert,
  }) => {
    class Undecorated {
      section() {
        return 'never'
      }
    }
    assert.throws(
      () =>
        defineConfig({
          model,
          actorResolver: actors.header(),
          systemPromptContributors: [Undecorated],
        }),
      'Invalid "systemPromptContributors[0]" in config/agent.ts: class Undecorated has no method decorated with @systemPromptContributor() from adonis-atrium/agent'
    )
    assert.throws(
      () =>
        defineConfig({
          model,
          actorResolver: actors.header(),
          systemPromptContributors: ['text' as any],
        }),
      /Invalid "systemPromptContributors\[0\]"/
    )
    assert.throws(
      () => defineConfig({ model, actorResolver: actors.header(), maxPageContextBytes: 0 }),
      /Invalid "maxPageContextBytes"/
    )
  })
})
