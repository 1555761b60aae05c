import type { FeatureInstaller } from '../shared/features.ts'
import { publishMigrationOnce } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { AGENT_TABLES } from './store/lucid.ts'

/**
 * The agent gateway publishes config/agent.ts, its six migrations (once
 * each, in foreign-key order), its provider and ANTHROPIC_API_KEY, and
 * offers to install the AI SDK with the Anthropic provider the config uses.
 */
export const agentInstaller: FeatureInstaller = {
  name: 'agent',
  description: 'Agent gateway: streamed chat over SSE, threads, tools with roles and timeouts',
  async install(command, codemods) {
    await codemods.makeUsingStub(stubsRoot, 'config/agent.stub', {})
    const order = ['threads', 'messages', 'runs', 'toolCalls', 'usage', 'quota'] as const
    for (const [index, key] of order.entries()) {
      await publishMigrationOnce(command, codemods, stubsRoot, {
        stub: `make/migration/${AGENT_TABLES[key]}.stub`,
        tableName: AGENT_TABLES[key],
        order: index,
      })
    }
    await codemods.updateRcFile((rcFile) => {
      rcFile.addProvider('adonis-atrium/providers/agent_provider')
    })
    await codemods.defineEnvVariables({ ANTHROPIC_API_KEY: '' })
    await codemods.defineEnvValidations({
      leadingComment: 'Variables for the Atrium agent gateway',
      variables: { ANTHROPIC_API_KEY: 'Env.schema.string()' },
    })
    const packages = [
      { name: 'ai', isDevDependency: false },
      { name: '@ai-sdk/anthropic', isDevDependency: false },
    ]
    const install = command.parsedFlags.install
    const shouldInstall =
      install === undefined
        ? await command.prompt.confirm('Install the AI SDK (ai and @ai-sdk/anthropic)?')
        : install === true
    if (shouldInstall) {
      await codemods.installPackages(packages)
    } else {
      await codemods.listPackagesToInstall(packages)
    }
  },
}
