import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { defineFilters, LucidAdapter } from '../../src/pagination/main.ts'
import { dialect } from '../helpers.ts'
import {
  branchCount,
  dropOrders,
  ensureOrders,
  explain,
  seeksIndexInEveryBranch,
} from '../../benchmarks/lib/orders.ts'
import { openDatabase } from './helpers.ts'

const PREFIX = 'pg_test_plan_'
const TABLE = `${PREFIX}orders`

/**
 * Asserts a keyset statement seeks an index in each of its UNION ALL branches.
 */
async function assertSeeks(
  assert: any,
  db: Database,
  query: { sql: string; bindings: readonly unknown[] }
) {
  const plan = await explain(db, query.sql, query.bindings)
  assert.isTrue(
    seeksIndexInEveryBranch(dialect(), plan, TABLE, branchCount(query.sql)),
    `${query.sql}\n${plan.join('\n')}`
  )
}

/** A comparison of two columns at once: `(a, b) < (?, ?)` */
const ROW_VALUE = /\(\s*[`"]?[\w.]+[`"]?\s*,\s*[`"]?[\w.`"]+[`"]?\s*\)\s*[<>]/

/**
 * How many segments a combined statement holds: UNION ALL branches, or on
 * MySQL/MariaDB the segment predicates it ORs (one range scan).
 */
function combinedSegments(sql: string) {
  if (dialect() !== 'mysql') return branchCount(sql)
  const where = sql.slice(sql.indexOf(' where (') + 8)
  return where.split(/\) or /i).length
}

const orders = defineFilters(
  { table: `${PREFIX}orders` },
  {
    fields: {
      createdAt: { column: 'created_at', type: 'datetime' },
      shippedAt: { column: 'shipped_at', type: 'datetime', nullable: true },
      amount: 'number',
    },
    filterable: { status: ['eq'] },
    sortable: ['createdAt', 'shippedAt', 'status', 'amount'],
  }
).with({ config: {} })

/** The same runner with a page's segments always in one statement, or never */
const combined = orders.with({ adapter: new LucidAdapter({ combineSegments: true }) })
const sequential = orders.with({ adapter: new LucidAdapter({ combineSegments: false }) })

const MODES = [
  { label: '', runner: orders },
  { label: ' (one segment at a time)', runner: sequential },
  { label: ' (segments as one statement)', runner: combined },
]

const SHAPES = [
  { name: 'single column', input: { sort: '-createdAt' } },
  { name: 'mixed directions', input: { sort: 'status,-amount' } },
  { name: 'nullable column', input: { sort: '-shippedAt' } },
  { name: 'nullable column, ascending', input: { sort: 'shippedAt' } },
  { name: 'filter + sort', input: { sort: '-createdAt', filter: { status: 'paid' } } },
]

test.group('Keyset query plans', (group) => {
  let db: Database
  group.setup(async () => {
    db = await openDatabase()
    await ensureOrders(db, PREFIX, 20_000)
    return async () => {
      await dropOrders(db, PREFIX)
      await db.manager.closeAll()
    }
  })

  for (const { label, runner } of MODES) {
    for (const shape of SHAPES) {
      test(`the keyset query for a ${shape.name} sort seeks an index${label}`, async ({
        assert,
      }) => {
        // Deep in the walk: the cursor of row 8,000 (row 3,000 of the 5,000 a filter keeps)
        const start = await orders.findPage(
          db.from(TABLE).offset('filter' in shape.input ? 2_999 : 7_999),
          { ...shape.input, paginate: { first: 1 } }
        )
        assert.isNotNull(start.endCursor)
        const queries: { sql: string; bindings: readonly unknown[] }[] = []
        const page = await runner.findPage(
          db.from(TABLE),
          { ...shape.input, paginate: { first: 25, after: start.endCursor! } },
          { onQuery: (query) => queries.push(query.toSQL()) }
        )
        assert.lengthOf(page.items, 25)
        assert.isAtLeast(queries.length, 1)
        for (const query of queries) {
          // PostgreSQL seeks a row value as one Index Cond; MariaDB would scan with it
          if (dialect() !== 'pg') assert.notMatch(query.sql, ROW_VALUE, 'no row values')
          await assertSeeks(assert, db, query)
        }
      })
    }
  }

  /**
   * The statements of the page after the cursor of row `offset + 1`.
   */
  async function pageAfter(runner: typeof orders, sort: string, offset: number, first: number) {
    const start = await orders.findPage(db.from(TABLE).offset(offset), {
      sort,
      paginate: { first: 1 },
    })
    const queries: { sql: string; bindings: readonly unknown[] }[] = []
    const page = await runner.findPage(
      db.from(TABLE),
      { sort, paginate: { first, after: start.endCursor! } },
      { onQuery: (query) => queries.push(query.toSQL()) }
    )
    return { start, page, queries }
  }

  async function nonNullRows() {
    const [counted] = await db.from(TABLE).whereNotNull('shipped_at').count('* as total')
    return Number(counted.total)
  }

  test('the NULL block of a nullable sort is its own index seek', async ({ assert }) => {
    // Walking -shippedAt past the last non-NULL value continues into the NULL block
    const { page, queries } = await pageAfter(
      sequential,
      '-shippedAt',
      (await nonNullRows()) - 3,
      10
    )
    assert.lengthOf(page.items, 10)
    assert.equal(page.items.filter((row) => row.shipped_at === null).length, 8)
    assert.lengthOf(queries, 2)
    assert.notInclude(queries[0].sql.toLowerCase(), 'is null')
    for (const query of queries) await assertSeeks(assert, db, query)
  })

  test('the NULL block of a nullable sort is its own branch of the combined statement', async ({
    assert,
  }) => {
    const { page, queries } = await pageAfter(combined, '-shippedAt', (await nonNullRows()) - 3, 10)
    assert.lengthOf(page.items, 10)
    assert.equal(page.items.filter((row) => row.shipped_at === null).length, 8)
    assert.lengthOf(queries, 1)
    assert.equal(combinedSegments(queries[0].sql), 2)
    const [values, nulls] = queries[0].sql.split(dialect() === 'mysql' ? /\) or /i : / union all /i)
    assert.notInclude(values.toLowerCase(), 'is null')
    assert.include(nulls.toLowerCase(), 'is null')
    await assertSeeks(assert, db, queries[0])
  })

  test('a page right past a group end, announced by its cursor, is one statement of index seeks', async ({
    assert,
  }) => {
    // 5,000 rows per status: the cursor of row 5,000 ends the first group
    const { start, page, queries } = await pageAfter(orders, 'status,-amount', 4_999, 25)
    assert.lengthOf(page.items, 25)
    assert.isTrue(page.items.every((row) => row.status !== start.items[0].status))
    assert.lengthOf(queries, 1)
    await assertSeeks(assert, db, queries[0])
  })

  for (const { label, runner } of MODES.slice(1)) {
    test(`a page across a group boundary of a few-valued leading column seeks an index per segment${label}`, async ({
      assert,
    }) => {
      // 5,000 rows per status: the cursor of row 4,997 leaves 3 rows in the first group
      const { start, page, queries } = await pageAfter(runner, 'status,-amount', 4_996, 25)
      assert.lengthOf(page.items, 25)
      assert.notEqual(page.items[3].status, start.items[0].status)
      assert.deepEqual(
        page.items.map((row) => row.status),
        [...Array(3).fill(start.items[0].status), ...Array(22).fill(page.items[3].status)]
      )
      if (runner === combined) {
        assert.lengthOf(queries, 1)
        assert.equal(combinedSegments(queries[0].sql), 2)
      } else {
        assert.lengthOf(queries, 2)
      }
      for (const query of queries) await assertSeeks(assert, db, query)
    })
  }
})
