import { test } from '@japa/runner'
import type { FileSystem } from '@japa/file-system'
import MakeAgent from '../../commands/make_agent.ts'
import { actors, agent, defineConfig } from '../../src/agent/main.ts'
import type { ModelPort } from '../../src/agent/main.ts'
import { setupConsoleApp } from '../helpers.ts'
import { agentApp, bodyOf } from './helpers.ts'

/** What the app's agent modules import: the package source (the app has no node_modules) */
const AGENT_ENTRY = new URL('../../src/agent/main.ts', import.meta.url).href

const idleModel: ModelPort = {
  label: 'idle',
  async *streamStep() {
    throw new Error('not called')
  },
}

/** An Adonis app's package.json: its modules are ES modules */
async function appPackage(fs: FileSystem) {
  await fs.createJson('package.json', { name: 'discovery-app', private: true, type: 'module' })
}

/** Writes an agent module of the temporary app */
async function agentModule(fs: FileSystem, path: string, name: string, extra = '') {
  await appPackage(fs)
  await fs.create(
    path,
    [
      `import { agent } from '${AGENT_ENTRY}'`,
      `@agent({ name: '${name}', description: 'The ${name} agent', systemPrompt: 'You are ${name}.' })`,
      `export default class ${name.replace(/\W/g, '')}Agent {}`,
      extra,
    ].join('\n')
  )
}

@agent({ name: 'listed', description: 'Listed in the config' })
class ListedAgent {}

test.group('Agent discovery in app/agents/', () => {
  test('without "agents" the @agent() classes of app/agents/ are found at boot, subfolders included', async ({
    assert,
    fs,
  }) => {
    await agentModule(fs, 'app/agents/support_agent.ts', 'support')
    await agentModule(
      fs,
      'app/agents/billing/refunds_agent.ts',
      'refunds',
      // a named export of another agent, and a module value that is not an agent
      `@agent({ name: 'audits', description: 'Audits' })\nexport class AuditsAgent {}\nexport const helper = 42`
    )
    // a tool module in the folder is imported and ignored
    await fs.create('app/agents/tools/lookup.ts', 'export const lookup = { spec: {} }')
    const { request, chat, fake } = await agentApp()

    const catalog = await bodyOf(await request('GET', '/agents'))
    assert.deepEqual(
      catalog.map((entry: any) => entry.name),
      // file path order, then export name order (AuditsAgent before default)
      ['audits', 'refunds', 'support']
    )
    const { sse } = await chat({ message: 'hi', agent: 'support' })
    await sse.rest()
    assert.deepEqual(fake.requests[0].body.messages[0], {
      role: 'system',
      content: 'You are support.',
    })
  })

  test('a list in "agents" wins: app/agents/ is not scanned', async ({ assert, fs }) => {
    // would stop the boot if it were imported
    await appPackage(fs)
    await fs.create('app/agents/broken_agent.ts', 'throw new Error("never imported")')
    const { request } = await agentApp({ config: { agents: [ListedAgent] } })
    const catalog = await bodyOf(await request('GET', '/agents'))
    assert.deepEqual(
      catalog.map((entry: any) => entry.name),
      ['listed']
    )
  })

  test('discoverAgents: false leaves the default agent, whatever app/agents/ holds', async ({
    assert,
    fs,
  }) => {
    await agentModule(fs, 'app/agents/support_agent.ts', 'support')
    const { request } = await agentApp({ config: { discoverAgents: false } })
    const catalog = await bodyOf(await request('GET', '/agents'))
    assert.deepEqual(catalog, [{ name: 'default', description: 'Default agent', isDefault: true }])
  })

  test('a module of app/agents/ that fails to import stops the boot naming the file', async ({
    assert,
    fs,
  }) => {
    await agentModule(fs, 'app/agents/support_agent.ts', 'support')
    await fs.create('app/agents/broken_agent.ts', 'throw new Error("database not reachable")')
    await assert.rejects(
      () => agentApp(),
      /Cannot import app\/agents\/broken_agent\.ts while discovering agents in app\/agents\/: database not reachable/
    )
  })

  test('discovered agents are checked at boot like listed ones', async ({ assert, fs }) => {
    await agentModule(fs, 'app/agents/one.ts', 'twin')
    await agentModule(fs, 'app/agents/two.ts', 'twin')
    await assert.rejects(
      () => agentApp(),
      'Two agents are named "twin" in app/agents/ (app/agents/one.ts and app/agents/two.ts): agent names must be unique'
    )
  })

  test('an unknown defaultAgent stops the boot once the agents are discovered', async ({
    assert,
    fs,
  }) => {
    await agentModule(fs, 'app/agents/support_agent.ts', 'support')
    await assert.rejects(
      () => agentApp({ config: { defaultAgent: 'ghost' } }),
      '"defaultAgent" in config/agent.ts is "ghost", which is not one of the agents: support'
    )
  })

  test('discoverAgents: true beside "agents" is refused by defineConfig', ({ assert }) => {
    assert.throws(
      () =>
        defineConfig({
          model: idleModel,
          actorResolver: actors.header(),
          agents: [ListedAgent],
          discoverAgents: true,
        }),
      '"discoverAgents: true" and "agents" are both set in config/agent.ts: agents come either from the list or from app/agents/. Remove one of them'
    )
  })

  test('an agent scaffolded by make:agent is discovered', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(MakeAgent, ['billing_support'])
    await command.exec()
    assert.equal(command.exitCode ?? 0, 0)
    const file = 'app/agents/billing_support_agent.ts'
    // The app of this test has no node_modules: the package resolves to its source
    const scaffolded = await fs.contents(file)
    assert.include(scaffolded, "from 'adonis-atrium/agent'")
    await fs.create(file, scaffolded.replace("'adonis-atrium/agent'", `'${AGENT_ENTRY}'`))
    await appPackage(fs)

    const { request, chat, fake } = await agentApp()
    const catalog = await bodyOf(await request('GET', '/agents'))
    assert.deepEqual(catalog, [
      { name: 'billing-support', description: 'Billing support agent', isDefault: true },
    ])
    const { sse } = await chat({ message: 'hi' })
    await sse.rest()
    assert.equal(fake.requests[0].body.messages[0].content, 'You are the billing-support agent.')
  })
})
