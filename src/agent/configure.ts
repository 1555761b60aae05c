import { readFile, writeFile } from 'node:fs/promises'
import type Configure from '@adonisjs/core/commands/configure'
import type { FeatureInstaller } from '../shared/features.ts'
import { publishMigrationOnce } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { AGENT_TABLES } from './store/lucid.ts'

/**
 * Adds the `#agents/*` import alias (app/agents/) to the app's package.json,
 * so config/agent.ts imports agent classes the way it imports models.
 */
async function addAgentsImportAlias(command: Configure) {
  const file = command.app.makePath('package.json')
  const manifest = JSON.parse(await readFile(file, 'utf8').catch(() => '{}'))
  if (manifest.imports?.['#agents/*']) {
    command.logger.action('update package.json imports').skipped('#agents/* already exists')
    return
  }
  manifest.imports = { ...manifest.imports, '#agents/*': './app/agents/*.js' }
  await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`)
  command.logger.action('update package.json imports (#agents/*)').succeeded()
}

/**
 * The agent gateway publishes config/agent.ts, its fourteen table migrations
 * (once each, in foreign-key order; the narrow rollups after `agent_rollups`,
 * whose sums they start from) and the one adding `agent_messages.attachments`,
 * its provider, the `#agents/*` alias and
 * ANTHROPIC_API_KEY; configure installs or lists the AI SDK with the
 * Anthropic provider the published config uses.
 */
export const agentInstaller: FeatureInstaller = {
  name: 'agent',
  description:
    'Agent gateway (preview): streamed chat over SSE, threads, tools with roles and timeouts',
  packages: [
    { name: 'ai', isDevDependency: false },
    { name: '@ai-sdk/anthropic', isDevDependency: false },
  ],
  async install(command, codemods) {
    await addAgentsImportAlias(command)
    await codemods.makeUsingStub(stubsRoot, 'config/agent.stub', {})
    const order = [
      'threads',
      'messages',
      'runs',
      'toolCalls',
      'usage',
      'quota',
      'pricing',
      'rollups',
      'modelRollups',
      'actorRollups',
      'runRollups',
      'errorRollups',
      'durationRollups',
      'retryRollups',
    ] as const
    for (const [index, key] of order.entries()) {
      await publishMigrationOnce(command, codemods, stubsRoot, {
        stub: `make/migration/${AGENT_TABLES[key]}.stub`,
        tableName: AGENT_TABLES[key],
        order: index,
      })
    }
    // A column added after the first release: published once, after every table
    await publishMigrationOnce(command, codemods, stubsRoot, {
      stub: 'make/migration/agent_messages_attachments.stub',
      tableName: 'agent_messages_attachments',
      action: 'alter',
      order: order.length,
    })
    // Added with the leases of quota holds: after the attachments column
    await publishMigrationOnce(command, codemods, stubsRoot, {
      stub: `make/migration/${AGENT_TABLES.quotaHolds}.stub`,
      tableName: AGENT_TABLES.quotaHolds,
      order: order.length + 1,
    })
    await codemods.updateRcFile((rcFile) => {
      rcFile.addProvider('adonis-atrium/providers/agent_provider')
    })
    await codemods.defineEnvVariables({ ANTHROPIC_API_KEY: '' })
    await codemods.defineEnvValidations({
      leadingComment: 'Variables for the Atrium agent gateway',
      variables: { ANTHROPIC_API_KEY: 'Env.schema.string.optional()' },
    })
  },
}
