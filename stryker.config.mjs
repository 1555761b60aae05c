/**
 * StrykerJS base options for `npm run mutation` (scripts/mutation.ts sets
 * `mutate` and the test command per module group). The command runner is
 * used because no Japa runner plugin exists: each mutant costs one
 * `npm test` run of the module's targeted spec files.
 */
export default {
  testRunner: 'command',
  coverageAnalysis: 'off',
  // ts-exec strips types without checking them; adding @ts-nocheck would change files the tests compare byte for byte
  disableTypeChecks: false,
  concurrency: 2,
  timeoutMS: 60_000,
  timeoutFactor: 2,
  tempDirName: 'tmp/stryker',
  cleanTempDir: true,
  ignorePatterns: [
    'tmp',
    'build',
    'coverage',
    'reports',
    '*.tgz',
    'examples/demo/tmp',
    'examples/demo/.adonisjs',
  ],
  reporters: ['clear-text', 'progress'],
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
}
