import { test } from '@japa/runner'
import { consoleApp } from '../console/helpers.ts'
import { exceptionEntry, logEntry } from '../console/entry_factories.ts'
import { random } from '../pagination/helpers.ts'

/** Pieces of the query languages of FTS5, PostgreSQL tsquery, MariaDB boolean mode, LIKE and SQL */
const PIECES = [
  '"',
  "'",
  '`',
  '*',
  '^',
  '-',
  '+',
  '~',
  '<',
  '>',
  '(',
  ')',
  '@',
  ':',
  '|',
  '&',
  '!',
  '%',
  '_',
  '\\',
  ';',
  '--',
  '/*',
  '*/',
  'AND',
  'OR',
  'NOT',
  'NEAR',
  'NEAR/2',
  'summary:',
  '{',
  '}',
  '[',
  ']',
  ',',
  ' ',
  '\t',
  '\n',
  'card',
  'declined',
  'job',
  '42',
  'ção',
  '日本語',
  '🚀',
  '\u0301',
  '\u202E',
  '\uFEFF',
  '\u0000',
  'e\u0301',
  'ß',
  'İ',
  'Σ',
  'x'.repeat(40),
]
const RUNS = 300

test.group('Hostile clients: console search', () => {
  test(`${RUNS} random searches made of query-language pieces never answer 5xx`, async ({
    assert,
  }) => {
    const { api, manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    await manager.store.write([
      exceptionEntry(Date.now() - 10, 'PaymentDeclinedException: Card ending 4242 was declined'),
      logEntry(Date.now(), 'info: job 42 done ção 日本語'),
    ])
    const next = random(20261124)
    const statuses = new Map<number, number>()
    for (let run = 0; run < RUNS; run++) {
      const length = 1 + Math.floor(next() * 12)
      const q = Array.from({ length }, () => PIECES[Math.floor(next() * PIECES.length)]).join('')
      const on = next() < 0.3 ? '/exceptions' : '/search'
      const response = await api(`${on}?q=${encodeURIComponent(q)}`)
      const body = (await response.json()) as any
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
      assert.oneOf(response.status, [200, 400], `${on} q=${JSON.stringify(q)}`)
      if (response.status === 400) assert.equal(body.errors[0].parameter, 'q')
      else assert.isArray(body.data)
    }
    // the generator reaches both outcomes, and the declined card is still found afterwards
    assert.isAbove(statuses.get(200) ?? 0, 0)
    assert.isAbove(statuses.get(400) ?? 0, 0)
    const found = await api('/search?q=declined')
    assert.lengthOf(((await found.json()) as any).data, 1)
  })
})
