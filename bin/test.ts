import { assert } from '@japa/assert'
import { apiClient } from '@japa/api-client'
import { fileSystem } from '@japa/file-system'
import { processCLIArgs, configure, run } from '@japa/runner'
import { assertServicesReachable, dialect } from '../tests/helpers.ts'

/**
 * Every suite needs the selected database and Redis: a missing service stops
 * the run here, named, instead of skipping the tests that need it.
 */
await assertServicesReachable()

processCLIArgs(process.argv.slice(2))
configure({
  files: ['tests/**/*.spec.ts'],
  plugins: [assert(), fileSystem({ autoClean: true }), apiClient()],
  timeout: 30_000,
  forceExit: true,
  setup: [() => console.log(`Running Atrium tests with DB=${dialect()}`)],
})

run()
