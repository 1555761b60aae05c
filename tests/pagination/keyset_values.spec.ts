import { test } from '@japa/runner'
import { DateTime } from 'luxon'
import { KeysetDate } from '../../src/pagination/cursor.ts'
import {
  extractCursorValues,
  preciseAlias,
  stripPreciseColumns,
} from '../../src/pagination/keyset.ts'
import type { KeysetColumn, ResolvedKeysetColumn } from '../../src/pagination/types.ts'

/**
 * How a page's last row becomes the cursor's values: Lucid models and plain
 * rows, qualified columns, every kind of date, bigints, and the database's
 * own text of a date that the keyset query selected beside it.
 */

function column(field: string, extra: Partial<ResolvedKeysetColumn> = {}) {
  return { field, direction: 'asc', column: field, ...extra } as ResolvedKeysetColumn
}

/** What Lucid hands back: attributes behind getters, extras apart */
function model(attributes: Record<string, unknown>, extras: Record<string, unknown> = {}) {
  return Object.assign(Object.create({ $attributes: attributes }), attributes, {
    $attributes: attributes,
    $extras: extras,
  })
}

test.group('Keyset cursor values', () => {
  test('a model is read by property, its precise text from $extras', ({ assert }) => {
    const row = model(
      { id: 7, createdAt: new Date('2025-01-02T03:04:05.123Z') },
      { [preciseAlias(0)]: '2025-01-02 03:04:05.123456' }
    )
    const [created, id] = extractCursorValues(row, [
      column('createdAt', { type: 'datetime' }),
      column('id'),
    ])
    assert.instanceOf(created, KeysetDate)
    assert.equal((created as KeysetDate).toISOString(), '2025-01-02T03:04:05.123Z')
    assert.equal((created as KeysetDate).precise, '2025-01-02 03:04:05.123456')
    assert.equal(id, 7)
  })

  test('a model value the row leaves undefined or null is null', ({ assert }) => {
    const row = model({ id: 1, title: null })
    assert.deepEqual(extractCursorValues(row, [column('title'), column('missing'), column('id')]), [
      null,
      null,
      1,
    ])
  })

  test('a plain row is read by field, then by the bare column name', ({ assert }) => {
    const row = { title: 'b', created_at: 5, id: 3 }
    const values = extractCursorValues(row, [
      column('title', { column: 'posts.title' }),
      column('createdAt', { column: 'posts.created_at' }),
      column('created', { column: 'created_at' }),
      column('nothing', { column: 'posts.nothing' }),
      { field: 'id', direction: 'asc' } as KeysetColumn,
      { field: 'unnamed', direction: 'asc' } as KeysetColumn,
    ])
    assert.deepEqual(values, ['b', 5, 5, null, 3, null])
  })

  test('a field present but undefined is not looked up under the column name', ({ assert }) => {
    const row = { title: undefined, t: 'other' }
    assert.deepEqual(extractCursorValues(row, [column('title', { column: 't' })]), [null])
  })

  test('a model is not read by its bare column name', ({ assert }) => {
    const row = model({ id: 1 })
    ;(row as any).created_at = 'column text'
    assert.deepEqual(
      extractCursorValues(row, [column('createdAt', { column: 'posts.created_at' })]),
      [null]
    )
  })

  test('dates: Date, Luxon, database text and epoch numbers', ({ assert }) => {
    const iso = '2025-01-02T03:04:05.000Z'
    const luxon = DateTime.fromISO(iso)
    const local = '2025-01-02 03:04:05'
    const values = extractCursorValues(
      { a: new Date(iso), b: luxon, c: local, d: Date.parse(iso), e: iso },
      [
        column('a'),
        column('b'),
        column('c', { type: 'datetime' }),
        column('d', { type: 'date' }),
        column('e', { type: 'datetime' }),
      ]
    )
    for (const value of values) assert.instanceOf(value, KeysetDate)
    const [a, b, c, d, e] = values as KeysetDate[]
    assert.equal(a.toISOString(), iso)
    assert.isUndefined(a.precise)
    assert.equal(b.toISOString(), iso)
    assert.isUndefined(b.precise)
    // the database's text is kept as the precise value and read as local time
    assert.equal(c.getTime(), new Date(2025, 0, 2, 3, 4, 5).getTime())
    assert.equal(c.precise, local)
    assert.equal(d.toISOString(), iso)
    assert.isUndefined(d.precise)
    assert.equal(e.toISOString(), iso)
    assert.equal(e.precise, iso)
  })

  test('a date column that is not a date is kept as it came', ({ assert }) => {
    const notADate = { when: 'soon' }
    const values = extractCursorValues({ a: 'not a date', b: notADate, c: true }, [
      column('a', { type: 'datetime' }),
      column('b', { type: 'date' }),
      column('c', { type: 'date' }),
    ])
    assert.deepEqual(values, ['not a date', notADate, true])
  })

  test('strings and numbers of other columns are never read as dates', ({ assert }) => {
    const values = extractCursorValues({ a: '2025-01-02 03:04:05', b: 1735787045000 }, [
      column('a'),
      column('b', { type: 'number' as any }),
    ])
    assert.deepEqual(values, ['2025-01-02 03:04:05', 1735787045000])
  })

  test('the precise text of a date comes from its own index only, and only as text', ({
    assert,
  }) => {
    const row = {
      first: new Date(0),
      second: new Date(1000),
      third: '1970-01-01 00:00:02',
      [preciseAlias(0)]: 123,
      [preciseAlias(1)]: '1970-01-01 00:00:01.000001',
      [preciseAlias(2)]: null,
    }
    const [first, second, third] = extractCursorValues(row, [
      column('first'),
      column('second'),
      column('third', { type: 'datetime' }),
    ]) as KeysetDate[]
    assert.isUndefined(first.precise)
    assert.equal(second.precise, '1970-01-01 00:00:01.000001')
    assert.equal(third.precise, '1970-01-01 00:00:02')
  })

  test('a bigint becomes its decimal text', ({ assert }) => {
    assert.deepEqual(
      extractCursorValues({ id: 9007199254740993n }, [column('id', { type: 'bigint' as any })]),
      ['9007199254740993']
    )
  })

  test('stripPreciseColumns removes the helper columns of a row or a model', ({ assert }) => {
    const row: Record<string, unknown> = {
      id: 1,
      [preciseAlias(0)]: 'a',
      [preciseAlias(1)]: 'b',
      [preciseAlias(2)]: 'kept: beyond the size',
    }
    stripPreciseColumns(row, 2)
    assert.deepEqual(row, { id: 1, [preciseAlias(2)]: 'kept: beyond the size' })

    const lucid = model({ id: 1 }, { [preciseAlias(0)]: 'a', other: 'x' })
    ;(lucid as any)[preciseAlias(0)] = 'own property, not an extra'
    stripPreciseColumns(lucid, 1)
    assert.deepEqual(lucid.$extras, { other: 'x' })
    assert.equal((lucid as any)[preciseAlias(0)], 'own property, not an extra')
    assert.doesNotThrow(() => stripPreciseColumns(null, 2))
  })
})
