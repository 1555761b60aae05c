import type { FeatureInstaller } from '../shared/features.ts'
import { publishMigrationOnce } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { CONSOLE_MIGRATIONS } from './stores/embedded.ts'

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
    // in timestamp order: the search migration alters console_entries, so it runs after it
    for (const [order, tableName] of CONSOLE_MIGRATIONS.entries()) {
      await publishMigrationOnce(command, codemods, stubsRoot, {
        stub: `make/migration/${tableName}.stub`,
        tableName,
        order,
      })
    }
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
