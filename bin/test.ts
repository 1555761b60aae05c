import { assert } from '@japa/assert'
import { apiClient } from '@japa/api-client'
import { fileSystem } from '@japa/file-system'
import { processCLIArgs, configure, run } from '@japa/runner'
import { glob } from 'node:fs/promises'
import { matchesGlob } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * Spec files that touch no database (no Lucid, no migrations): the `nodb`
 * suite. `.ci/run` runs it once and the `db` suite on each database;
 * `npm test` runs both. A file moves here only if it opens no connection.
 */
const DATABASE_FREE = [
  'tests/docs/**/*.spec.ts',
  'tests/foundation/configure.spec.ts',
  'tests/foundation/install.spec.ts',
  'tests/collaboration/browser.spec.ts',
]
const ROOT = fileURLToPath(new URL('../', import.meta.url))

/** Every other spec file: the `db` suite */
async function databaseSpecs() {
  const files = await Array.fromAsync(glob('tests/**/*.spec.ts', { cwd: ROOT }))
  return files
    .filter((file) => !DATABASE_FREE.some((pattern) => matchesGlob(file, pattern)))
    .sort()
    .map((file) => pathToFileURL(`${ROOT}${file}`))
}

/**
 * Each run gets its own databases and tmp/ folder (see tests/helpers.ts);
 * set before the helpers are imported so spawned processes inherit it.
 */
process.env.ATRIUM_TEST_RUN ??= String(process.pid)
const { assertServicesReachable, createRunDatabase, dialect } = await import('../tests/helpers.ts')

/**
 * Every suite needs the selected database and Redis: a missing service stops
 * the run here, named, instead of skipping the tests that need it.
 */
await assertServicesReachable()
const dropRunDatabase = await createRunDatabase()

processCLIArgs(process.argv.slice(2))
configure({
  suites: [
    { name: 'nodb', files: DATABASE_FREE },
    { name: 'db', files: databaseSpecs },
  ],
  plugins: [assert(), fileSystem({ autoClean: true }), apiClient()],
  timeout: 30_000,
  forceExit: true,
  setup: [
    () =>
      console.log(`Running Atrium tests with DB=${dialect()} (run ${process.env.ATRIUM_TEST_RUN})`),
  ],
  teardown: [() => dropRunDatabase()],
})

run()
