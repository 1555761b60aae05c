/**
 * `npm run mutation [-- <group> ...]`: runs StrykerJS once per module group
 * with the group's targeted spec files on SQLite, then prints the mutation
 * score per group and every surviving mutant. See docs/testing.md.
 */
import { relative } from 'node:path'
import { Stryker } from '@stryker-mutator/core'
import type { MutantResult, PartialStrykerOptions } from '@stryker-mutator/api/core'

interface Group {
  mutate: string[]
  tests: string[]
}

/** Modules where a silent bug costs money or data, each with the specs that exercise it */
const GROUPS: Record<string, Group> = {
  money: {
    mutate: ['src/payments/money.ts'],
    tests: ['tests/payments/billing.spec.ts'],
  },
  cursor: {
    mutate: ['src/pagination/cursor.ts'],
    tests: ['tests/pagination/cursor.spec.ts', 'tests/pagination/errors.spec.ts'],
  },
  tokens: {
    mutate: ['src/collaboration/tokens.ts'],
    tests: ['tests/collaboration/config.spec.ts', 'tests/collaboration/routes.spec.ts'],
  },
}

/** The shared options; imported by URL because the config is plain JavaScript for Stryker's own CLI */
const { default: base } = (await import(
  new URL('../stryker.config.mjs', import.meta.url).href
)) as {
  default: PartialStrykerOptions
}

const requested = process.argv.slice(2)
const unknown = requested.filter((name) => !(name in GROUPS))
if (unknown.length) {
  console.error(`Unknown group(s) ${unknown.join(', ')}; known: ${Object.keys(GROUPS).join(', ')}`)
  process.exit(1)
}
process.env.DB = 'sqlite'

const summary: string[] = []
for (const name of requested.length ? requested : Object.keys(GROUPS)) {
  const group = GROUPS[name]
  const files = group.tests.map((file) => `--files=${file}`).join(' ')
  const options: PartialStrykerOptions = {
    ...base,
    mutate: group.mutate,
    commandRunner: { command: `npm test -- ${files}` },
  }
  const started = Date.now()
  const results: MutantResult[] = await new Stryker(options).runMutationTest()
  const seconds = Math.round((Date.now() - started) / 1000)
  const killed = results.filter((r) => r.status === 'Killed' || r.status === 'Timeout').length
  const survivors = results.filter((r) => r.status === 'Survived' || r.status === 'NoCoverage')
  const valid = killed + survivors.length
  const score = valid ? ((killed / valid) * 100).toFixed(1) : 'n/a'
  summary.push(`${name}: ${score}% killed (${killed}/${valid}) in ${seconds}s`)
  for (const mutant of survivors) {
    const { line, column } = mutant.location.start
    summary.push(
      `  survived ${relative(process.cwd(), mutant.fileName)}:${line}:${column} ${mutant.mutatorName}: ${JSON.stringify(mutant.replacement)}`
    )
  }
}
console.log(`\nMutation score per module group\n${summary.join('\n')}`)
