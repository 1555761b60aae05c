import { assert } from '@japa/assert'
import { apiClient } from '@japa/api-client'
import { fileSystem } from '@japa/file-system'
import { processCLIArgs, configure, run } from '@japa/runner'

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
  files: ['tests/**/*.spec.ts'],
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
