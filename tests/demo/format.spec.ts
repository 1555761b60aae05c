import { test } from '@japa/runner'
import { escapeHtml } from '../../examples/demo/features/layout.ts'
import { formatDate, formatJson, formatMoney } from '../../examples/demo/features/format.ts'

/** Intl separates the symbol with a no-break space */
const nbsp = (text: string) => text.replace(/ /g, '\u00a0')

test.group('Demo formatting', () => {
  test('escapeHtml escapes text and both quotes; null is empty', ({ assert }) => {
    assert.equal(
      escapeHtml(`<a href="x" title='y'>&</a>`),
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;'
    )
    assert.equal(escapeHtml(null), '')
    assert.equal(escapeHtml(undefined), '')
  })

  test('formatDate reads epoch ms, epoch seconds, digit strings and ISO strings', ({ assert }) => {
    const local = new Date(2026, 10, 30, 19, 32, 32)
    const expected = '<span>2026-11-30</span> <span>19:32:32</span>'
    assert.include(formatDate(local.getTime()), expected)
    assert.include(formatDate(local.getTime() / 1000), expected)
    assert.include(formatDate(String(local.getTime())), expected)
    assert.include(formatDate(local.toISOString()), expected)
    assert.include(formatDate(local), expected)
    assert.equal(formatDate(null), '—')
    assert.equal(formatDate('<not a date>'), '&lt;not a date&gt;')
  })

  test('formatMoney shows minor units in the currency, in its locale', ({ assert }) => {
    assert.equal(formatMoney(2590, 'BRL'), nbsp('R$ 25,90'))
    assert.equal(formatMoney(2590, 'brl'), nbsp('R$ 25,90'))
    assert.equal(formatMoney(1130, 'EUR'), nbsp('11,30 €'))
    assert.equal(formatMoney(500, 'JPY'), '¥500')
    assert.equal(formatMoney(1234, null), '1,234 (minor units)')
    assert.equal(formatMoney(null, 'BRL'), '—')
  })

  test('formatJson escapes, and folds long JSON into <details>', ({ assert }) => {
    assert.equal(formatJson('{"a":"<b>"}'), '<code>{&quot;a&quot;:&quot;&lt;b&gt;&quot;}</code>')
    const long = formatJson({ text: 'x'.repeat(100), tag: '</pre><script>' })
    assert.match(long, /^<details><summary>/)
    assert.include(long, '&lt;/pre&gt;&lt;script&gt;')
    assert.notInclude(long, '<script>')
  })
})
