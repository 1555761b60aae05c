import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { DateTime } from 'luxon'
import { KeysetDate } from '../../src/pagination/cursor.ts'
import {
  buildKeyset,
  extractCursorValues,
  keysetPredicate,
  parseSort,
  planSegments,
  stripPreciseColumns,
  reverseKeyset,
  segmentProbes,
  type SqlFragment,
} from '../../src/pagination/keyset.ts'
import type { KeysetSegment, ResolvedKeysetColumn } from '../../src/pagination/types.ts'
import { random } from './helpers.ts'
import { memoryDatabase } from './memory_database.ts'

/**
 * Database-free: every keyset segment and probe run against an in-memory
 * SQLite table, its rows compared with the plain ORDER BY read past the cursor.
 */
type Row = { id: number; a: string | null; b: number | null; c: number }

const col = (
  field: 'id' | 'a' | 'b' | 'c',
  direction: 'asc' | 'desc',
  extra: Partial<ResolvedKeysetColumn> = {}
): ResolvedKeysetColumn => ({
  field,
  column: `rows.${field}`,
  direction,
  nullable: false,
  ...extra,
})

/** Sorts with ties on every column, NULLs leading, inside and after runs of one direction */
const KEYSETS: Record<string, ResolvedKeysetColumn[]> = {
  'a few nullable, -b nullable, id': [
    col('a', 'asc', { nullable: true, few: true }),
    col('b', 'desc', { nullable: true }),
    col('id', 'asc'),
  ],
  '-a few nullable, c, -id': [
    col('a', 'desc', { nullable: true, few: true }),
    col('c', 'asc'),
    col('id', 'desc'),
  ],
  'b nullable, -c, -id': [col('b', 'asc', { nullable: true }), col('c', 'desc'), col('id', 'desc')],
  '-b nullable, id': [col('b', 'desc', { nullable: true }), col('id', 'asc')],
  'c, b nullable, id': [col('c', 'asc'), col('b', 'asc', { nullable: true }), col('id', 'asc')],
  'c, -b nullable, -id': [col('c', 'asc'), col('b', 'desc', { nullable: true }), col('id', 'desc')],
  '-c, -id': [col('c', 'desc'), col('id', 'desc')],
  'c few, -b nullable, c again': [
    col('c', 'asc', { few: true }),
    col('b', 'desc', { nullable: true }),
    col('id', 'asc'),
  ],
  '-c few, -id': [col('c', 'desc', { few: true }), col('id', 'desc')],
  'c, id, b nullable': [col('c', 'asc'), col('id', 'asc'), col('b', 'asc', { nullable: true })],
  'id few': [col('id', 'asc', { few: true })],
  '-id': [col('id', 'desc')],
}

const bindAsIs = (value: unknown) => value

/** A column of the orders table, as the runner resolves it */
const seek = (
  name: string,
  direction: 'asc' | 'desc',
  extra: Partial<ResolvedKeysetColumn> = {}
): ResolvedKeysetColumn => ({
  field: name,
  column: `orders.${name}`,
  direction,
  nullable: false,
  ...extra,
})

async function seed(db: Database) {
  await db.connection().schema.createTable('rows', (table) => {
    table.integer('id').primary()
    table.string('a').nullable()
    table.integer('b').nullable()
    table.integer('c').notNullable()
  })
  const next = random(7)
  const rows: Row[] = []
  for (let id = 1; id <= 20; id++) {
    const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]
    rows.push({ id, a: pick([null, 'x', 'y']), b: pick([null, 1, 2, 3]), c: pick([1, 2]) })
  }
  await db.table('rows').multiInsert(rows)
  return rows
}

function ordered(db: Database, keyset: ResolvedKeysetColumn[], where?: SqlFragment) {
  const query = db.from('rows').select('id')
  if (where) query.whereRaw(where.sql, where.bindings as any[])
  for (const { column, direction } of keyset) query.orderBy(column, direction)
  return query.then((rows) => rows.map((row: { id: number }) => row.id))
}

test.group('Keyset predicates on SQLite', (group) => {
  let db: Database
  let rows: Row[]
  group.setup(async () => {
    db = memoryDatabase()
    rows = await seed(db)
    return () => db.manager.closeAll()
  })

  for (const [name, forward] of Object.entries(KEYSETS)) {
    test(`"${name}": the segments after each row hold exactly the rows after it, forward and backward`, async ({
      assert,
    }) => {
      for (const keyset of [forward, reverseKeyset(forward)]) {
        const all = await ordered(db, keyset)
        assert.deepEqual(
          await ordered(db, keyset),
          all,
          'planSegments(keyset, null) is the whole table'
        )
        assert.deepEqual(planSegments(keyset, null), [null])
        for (const rowValues of [false, true]) {
          for (const [position, id] of all.entries()) {
            const row = rows.find((candidate) => candidate.id === id)!
            const values = keyset.map(({ field }) => row[field as keyof Row])
            const read: number[] = []
            for (const segment of planSegments(keyset, values)) {
              const where = keysetPredicate(keyset, segment!, bindAsIs, { rowValues })
              read.push(...(await ordered(db, keyset, where)))
            }
            assert.deepEqual(read, all.slice(position + 1), `after ${id}, rowValues ${rowValues}`)
          }
        }
      }
    })
  }

  for (const [name, forward] of Object.entries(KEYSETS)) {
    test(`"${name}": a segment's probes read its rows, closest to the cursor first`, async ({
      assert,
    }) => {
      for (const keyset of [forward, reverseKeyset(forward)]) {
        const all = await ordered(db, keyset)
        for (const id of all) {
          const row = rows.find((candidate) => candidate.id === id)!
          const values = keyset.map(({ field }) => row[field as keyof Row])
          for (const segment of planSegments(keyset, values) as KeysetSegment[]) {
            const whole = await ordered(db, keyset, keysetPredicate(keyset, segment, bindAsIs))
            const probed: number[] = []
            for (const probe of segmentProbes(keyset, segment, bindAsIs)) {
              probed.push(...(await ordered(db, keyset, probe)))
            }
            assert.deepEqual(probed, whole, `${segment.kind} after ${id}`)
          }
        }
      }
    })
  }

  test('segments: a few-valued lead seeks its tie then beyond; a nullable lead its NULL block', ({
    assert,
  }) => {
    const [few, nullable] = [KEYSETS['c few, -b nullable, c again'], KEYSETS['-b nullable, id']]
    assert.deepEqual(
      planSegments(few, [1, 2, 3]).map((segment) => segment!.kind),
      ['tie', 'beyond']
    )
    assert.deepEqual(
      planSegments(KEYSETS['id few'], [4]).map((segment) => segment!.kind),
      ['after']
    )
    assert.deepEqual(
      planSegments(nullable, [2, 3]).map((segment) => segment!.kind),
      ['after', 'nulls']
    )
    assert.deepEqual(
      planSegments(KEYSETS['a few nullable, -b nullable, id'], [null, 2, 3]).map(
        (segment) => segment!.kind
      ),
      ['nullsAfter', 'values']
    )
    assert.deepEqual(
      planSegments(KEYSETS['-a few nullable, c, -id'], ['x', 1, 3]).map((segment) => segment!.kind),
      ['tie', 'beyond', 'nulls']
    )
    assert.deepEqual(
      planSegments(nullable, [null, 3]).map((segment) => segment!.kind),
      ['nullsAfter']
    )
    // Nothing follows a NULL in a one-column descending keyset: no row matches
    const alone = [col('b', 'desc', { nullable: true })]
    assert.deepEqual(keysetPredicate(alone, { kind: 'nullsAfter', values: [null] }, bindAsIs), {
      sql: '1 = 0',
      bindings: [],
    })
  })
})

test.group('Keyset predicates: the index bounds PostgreSQL and MariaDB seek on', () => {
  test('runs of same-direction columns become one row value only when the dialect seeks with it', ({
    assert,
  }) => {
    const keyset = [
      seek('status', 'asc', { few: true }),
      seek('amount', 'desc'),
      seek('id', 'desc'),
    ]
    const values = ['paid', 50, 7]
    const rows = keysetPredicate(keyset, { kind: 'tie', values }, bindAsIs, { rowValues: true })
    assert.equal(rows.sql, '?? = ? AND (??, ??) < (?, ?)')
    assert.deepEqual(rows.bindings, ['orders.status', 'paid', 'orders.amount', 'orders.id', 50, 7])

    const plain = keysetPredicate(keyset, { kind: 'tie', values }, bindAsIs)
    assert.equal(plain.sql, '?? = ? AND ?? <= ? AND (?? < ? OR (?? = ? AND ?? < ?))')

    // Mixed directions keep the leading bound; the descending tail is one row value
    const after = keysetPredicate(keyset, { kind: 'after', values }, bindAsIs, { rowValues: true })
    assert.equal(after.sql, '?? >= ? AND (?? > ? OR (?? = ? AND (??, ??) < (?, ?)))')
  })

  test('a nullable column or a NULL value breaks a row-value run', ({ assert }) => {
    const keyset = [
      seek('shipped_at', 'desc', { nullable: true }),
      seek('amount', 'desc'),
      seek('id', 'desc'),
    ]
    const nulls = keysetPredicate(keyset, { kind: 'nullsAfter', values: [null, 5, 3] }, bindAsIs, {
      rowValues: true,
    })
    // The NULL block's own order: the rest of the keyset after the NULL, as one row value
    assert.equal(nulls.sql, '?? IS NULL AND (??, ??) < (?, ?)')
    const middle = keysetPredicate(
      [seek('amount', 'desc'), seek('shipped_at', 'desc', { nullable: true }), seek('id', 'desc')],
      { kind: 'after', values: [5, '2025-01-01 00:00:00', 3] },
      bindAsIs,
      { rowValues: true }
    )
    assert.equal(
      middle.sql,
      '?? <= ? AND (?? < ? OR (?? = ? AND ((?? < ? OR ?? IS NULL) OR (?? = ? AND ?? < ?))))'
    )
    const uniform = keysetPredicate(
      [seek('created_at', 'desc'), seek('id', 'desc')],
      { kind: 'after', values: ['2025-01-01 00:00:00.000001', 3] },
      bindAsIs,
      { rowValues: true }
    )
    assert.equal(uniform.sql, '(??, ??) < (?, ?)')
  })
})

test.group('Segment probes', () => {
  test('a segment splits into exact seeks, closest to the cursor first', ({ assert }) => {
    const keyset = [
      seek('status', 'asc', { few: true }),
      seek('amount', 'desc'),
      seek('id', 'desc'),
    ]
    const probes = segmentProbes(keyset, { kind: 'tie', values: ['paid', 50, 7] }, bindAsIs)
    assert.deepEqual(
      probes.map(({ sql }) => sql),
      ['?? = ? AND ?? = ? AND ?? < ?', '?? = ? AND ?? < ?']
    )
    assert.deepEqual(probes[0].bindings, [
      'orders.status',
      'paid',
      'orders.amount',
      50,
      'orders.id',
      7,
    ])
    // A nullable descending lead keeps its NULL block apart; nothing follows a NULL descending
    const nullable = [seek('shipped_at', 'desc', { nullable: true }), seek('id', 'desc')]
    assert.deepEqual(
      segmentProbes(nullable, { kind: 'after', values: ['2025-01-01', 3] }, bindAsIs).map(
        ({ sql }) => sql
      ),
      ['?? = ? AND ?? < ?', '?? < ?']
    )
    assert.deepEqual(
      segmentProbes(nullable, { kind: 'nullsAfter', values: [null, 3] }, bindAsIs).map(
        ({ sql }) => sql
      ),
      ['?? IS NULL AND ?? < ?']
    ) // the NULL block of a three-column keyset: one seek per column after the lead
    const three = [
      seek('shipped_at', 'asc', { nullable: true, few: true }),
      seek('amount', 'desc'),
      seek('id', 'desc'),
    ]
    assert.deepEqual(
      segmentProbes(three, { kind: 'nullsAfter', values: [null, 50, 3] }, bindAsIs).map(
        ({ sql }) => sql
      ),
      ['?? IS NULL AND ?? = ? AND ?? < ?', '?? IS NULL AND ?? < ?']
    )
  })

  test('the after segment of a nullable descending lead leaves out its NULLs; a nullable ascending column is bounded', ({
    assert,
  }) => {
    // the NULLs of the lead are a segment of their own: no IS NULL here
    const nullable = [seek('shipped_at', 'desc', { nullable: true }), seek('id', 'desc')]
    assert.equal(
      keysetPredicate(nullable, { kind: 'after', values: ['2025-01-01', 3] }, bindAsIs).sql,
      '?? <= ? AND (?? < ? OR (?? = ? AND ?? < ?))'
    )
    // ascending, a nullable column's NULLs come first, before any cursor value: the bound keeps every row after it
    const tie = [
      seek('status', 'asc', { few: true }),
      seek('shipped_at', 'asc', { nullable: true }),
      seek('id', 'asc'),
    ]
    assert.equal(
      keysetPredicate(tie, { kind: 'tie', values: ['paid', '2025-01-01', 3] }, bindAsIs).sql,
      '?? = ? AND ?? >= ? AND (?? > ? OR (?? = ? AND ?? > ?))'
    )
  })
})

test.group('Keyset helpers', () => {
  test('parseSort reads signs, spaces and lists; buildKeyset adds the primary key once', ({
    assert,
  }) => {
    assert.deepEqual(parseSort(['- amount , + status', 'a+b']), [
      { field: 'amount', direction: 'desc' },
      { field: 'status', direction: 'asc' },
      { field: 'a+b', direction: 'asc' },
    ])
    for (const empty of ['', null, undefined, [], ' , ']) assert.deepEqual(parseSort(empty), [])
    assert.deepEqual(buildKeyset([], 'id'), [{ field: 'id', direction: 'asc' }])
    assert.deepEqual(buildKeyset('-a,b,-a', 'id'), [
      { field: 'a', direction: 'desc' },
      { field: 'b', direction: 'asc' },
      { field: 'id', direction: 'asc' },
    ])
    const columns = [
      { field: 'a', direction: 'desc' as const, extra: 1 },
      { field: 'id', direction: 'asc' as const },
    ]
    assert.deepEqual(buildKeyset(columns, 'id'), [
      { field: 'a', direction: 'desc' },
      { field: 'id', direction: 'asc' },
    ])
    assert.deepEqual(buildKeyset(['-a', 'b'], 'id'), [
      { field: 'a', direction: 'desc' },
      { field: 'b', direction: 'asc' },
      { field: 'id', direction: 'asc' },
    ])
  })

  test('extractCursorValues: dates keep the database text, other values pass as they are', ({
    assert,
  }) => {
    const keyset = [
      col('a', 'asc', { type: 'datetime' }),
      col('b', 'asc'),
      col('c', 'asc', { type: 'date' }),
      col('id', 'asc'),
    ]
    const row = {
      a: '2025-01-02 03:04:05.123456',
      b: new Date('2025-01-01T00:00:00Z'),
      c: 'not a date',
      id: 12n,
      __atrium_k1: '2025-01-01 00:00:00.000001',
    }
    const [a, b, c, id] = extractCursorValues(row, keyset)
    assert.instanceOf(a, KeysetDate)
    assert.equal((a as KeysetDate).precise, '2025-01-02 03:04:05.123456')
    assert.equal((a as KeysetDate).toISOString(), new Date('2025-01-02T03:04:05.123').toISOString())
    assert.equal((b as KeysetDate).precise, '2025-01-01 00:00:00.000001')
    assert.equal(c, 'not a date')
    assert.equal(id, '12')
    const luxon = DateTime.fromISO('2025-05-06T07:08:09Z')
    const [fromLuxon, fromNumber] = extractCursorValues({ a: luxon, b: 0 }, [
      col('a', 'asc'),
      col('b', 'asc', { type: 'datetime' }),
    ])
    assert.equal((fromLuxon as Date).getTime(), luxon.toMillis())
    assert.isUndefined((fromLuxon as KeysetDate).precise)
    assert.equal((fromNumber as Date).getTime(), 0)
    assert.deepEqual(
      extractCursorValues({ a: 'x', b: { c: 1 } }, [
        col('a', 'asc', { type: 'date' }),
        col('b', 'asc', { type: 'date' }),
      ]),
      ['x', { c: 1 }]
    )
    // A model reads its attributes by field, its extras for the precise text
    const model = {
      $attributes: {},
      a: null,
      id: 4,
      rows: 'ignored',
      $extras: { __atrium_k0: '2025-01-01 00:00:00.5' },
    }
    assert.deepEqual(extractCursorValues(model, [col('a', 'asc'), col('id', 'asc')]), [null, 4])
    // A plain row falls back to the bare column name
    const bare = { ...col('b', 'asc'), field: 'total', column: 'rows.b' }
    assert.deepEqual(extractCursorValues({ b: 9 }, [bare]), [9])
    assert.deepEqual(extractCursorValues({ b: 9 }, [{ field: 'total', direction: 'asc' }]), [null])
    stripPreciseColumns(model, 1)
    assert.deepEqual(model.$extras, {})
    const plain = { id: 1, __atrium_k0: 'x', __atrium_k1: 'y', __atrium_k2: 'z' }
    stripPreciseColumns(plain, 2)
    assert.deepEqual(plain, { id: 1, __atrium_k2: 'z' } as any)
  })
})
