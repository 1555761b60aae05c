import type { FeatureInstaller } from '../shared/features.ts'
import { publishMigrationOnce } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'

/**
 * The console publishes config/console.ts (on the embedded SQLite store, so
 * it needs better-sqlite3), the console_entries, console_rollups,
 * console_entries_search and console_leases migrations (once each, for an
 * app that moves the console to its own database), its provider and the
 * optional CONSOLE_SESSION_SECRET variable. The embedded store registers its
 * `console` connection at boot: nothing is added to config/database.ts.
 * `configure.ts` registers `adonis-atrium/commands` (console:prune) for every feature.
 */
export const consoleInstaller: FeatureInstaller = {
  name: 'console',
  description: 'Operations console (preview): requests, queries and exceptions behind a gate',
  packages: [{ name: 'better-sqlite3', isDevDependency: false }],
  async install(command, codemods) {
    await codemods.makeUsingStub(stubsRoot, 'config/console.stub', {})
    await publishMigrationOnce(command, codemods, stubsRoot, {
      stub: 'make/migration/console_entries.stub',
      tableName: 'console_entries',
    })
    await publishMigrationOnce(command, codemods, stubsRoot, {
      stub: 'make/migration/console_rollups.stub',
      tableName: 'console_rollups',
      order: 1,
    })
    await publishMigrationOnce(command, codemods, stubsRoot, {
      stub: 'make/migration/console_entries_search.stub',
      tableName: 'console_entries_search',
      order: 2,
    })
    await publishMigrationOnce(command, codemods, stubsRoot, {
      stub: 'make/migration/console_leases.stub',
      tableName: 'console_leases',
      order: 3,
    })
    await codemods.updateRcFile((rcFile) => {
      rcFile.addProvider('adonis-atrium/providers/console_provider')
    })
    await codemods.defineEnvVariables({ CONSOLE_SESSION_SECRET: '' })
    await codemods.defineEnvValidations({
      leadingComment: 'Variables for the Atrium console',
      variables: { CONSOLE_SESSION_SECRET: 'Env.schema.string.optional()' },
    })
  },
}
