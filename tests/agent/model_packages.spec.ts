import { test } from '@japa/runner'
import { actors, defineConfig, models } from '../../src/agent/main.ts'
import { setupApp } from '../helpers.ts'
import { agentApp, deltasOf } from './helpers.ts'

const MISSING = '@ai-sdk/atrium-test-missing-provider'

test.group('Agent model packages', () => {
  test('models.anthropic() imports @ai-sdk/anthropic at boot and speaks its wire format', async ({
    assert,
  }) => {
    const { chat, fake } = await agentApp({
      wire: 'anthropic',
      model: (server) =>
        models.anthropic('claude-sonnet-4-5', { baseURL: `${server.url}/v1`, apiKey: 'test-key' }),
    })
    const { sse } = await chat({ message: 'hello' })
    assert.deepEqual(deltasOf(await sse.rest()), ['ok'])
    assert.equal(fake.requests[0].path, '/v1/messages')
    assert.equal(fake.requests[0].body.model, 'claude-sonnet-4-5')
  })

  test('models.openaiCompatible() imports @ai-sdk/openai-compatible at boot', async ({
    assert,
  }) => {
    const { chat, fake } = await agentApp({
      model: (server) =>
        models.openaiCompatible('local-model', {
          name: 'local',
          baseURL: `${server.url}/v1`,
          includeUsage: true,
        }),
    })
    const { sse } = await chat({ message: 'hello' })
    assert.deepEqual(deltasOf(await sse.rest()), ['ok'])
    assert.equal(fake.requests[0].path, '/v1/chat/completions')
    assert.equal(fake.requests[0].body.model, 'local-model')
  })

  test('a model whose provider package is missing stops the boot with one line naming npm install', async ({
    assert,
  }) => {
    let built = false
    const config = defineConfig({
      model: models.fromPackage(MISSING, () => {
        built = true
        return 'never' as any
      }),
      actorResolver: actors.header(),
    })
    await assert.rejects(
      () =>
        setupApp({
          providers: [() => import('../../providers/agent_provider.ts')],
          config: { agent: config },
          http: false,
        }),
      `The agent gateway (config/agent.ts) needs "${MISSING}", which is not installed. Run: npm install ${MISSING}`
    )
    assert.isFalse(built)
  })

  test('resolving a lazy model of a missing package throws the missing-package error, not Node’s', async ({
    assert,
  }) => {
    const error = await models
      .fromPackage(MISSING, () => 'never' as any)
      .resolve()
      .catch((caught) => caught)
    assert.equal(error.code, 'E_ATRIUM_MISSING_PACKAGE')
    assert.equal(
      error.message,
      `"model" in config/agent.ts needs "${MISSING}", which is not installed. Run: npm install ${MISSING}`
    )
  })

  test('models.fromPackage() refuses a call without a package name or a builder', ({ assert }) => {
    assert.throws(
      () => models.fromPackage('', () => 'x' as any),
      'models.fromPackage(packageName, build) in config/agent.ts needs a package name and a function'
    )
  })
})
