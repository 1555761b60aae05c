/**
 * A lean Japa run of database-free spec files for `npm run mutation`: no
 * service checks, no run database, only the assert plugin, so a mutant of a
 * pure module costs a process start and its tests, not an app's boot.
 * Usage: node --import=@poppinss/ts-exec scripts/mutation_nodb_runner.ts --files=<spec> ...
 */
import { assert } from '@japa/assert'
import { configure, processCLIArgs, run } from '@japa/runner'

const files = process.argv
  .slice(2)
  .filter((arg) => arg.startsWith('--files='))
  .map((arg) => arg.slice('--files='.length))
if (files.length === 0) {
  console.error('Name the spec files with --files=<path>')
  process.exit(1)
}
// a mutant is killed by the first failing test: the rest would only cost time (each
// waiting test of a socket spec, seconds)
processCLIArgs(['--bail'])
configure({ files, plugins: [assert()], timeout: 30_000, forceExit: false })
await run()
