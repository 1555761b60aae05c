import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { defineFilters, type CursorPage } from '../../src/pagination/main.ts'
import { PgTestOrder, ROWS, expectedIds, withSeededOrders } from './helpers.ts'

const orders = defineFilters(PgTestOrder, {
  fields: {
    amount: 'number',
    paid: 'boolean',
    shippedAt: { type: 'datetime', nullable: true },
  },
  filterable: { amount: ['gte', 'lte'], status: ['eq', 'in'], paid: ['eq'] },
  sortable: ['createdAt', 'shippedAt', 'status', 'amount', 'id'],
  defaultSort: '-createdAt',
}).with({ config: { maxPageSize: 100 } })

/**
 * Sort shapes the walks cover, each with the plain ORDER BY it must match.
 * NULLs sort as the smallest value (first ascending, last descending).
 */
const SHAPES: { sort: string; order: [string, 'asc' | 'desc', boolean?][]; filter?: any }[] = [
  {
    sort: 'createdAt',
    order: [
      ['created_at', 'asc'],
      ['id', 'asc'],
    ],
  },
  {
    sort: '-createdAt',
    order: [
      ['created_at', 'desc'],
      ['id', 'desc'],
    ],
  },
  {
    sort: 'status,-amount',
    order: [
      ['status', 'asc'],
      ['amount', 'desc'],
      ['id', 'desc'],
    ],
  },
  {
    sort: '-amount,createdAt',
    order: [
      ['amount', 'desc'],
      ['created_at', 'asc'],
      ['id', 'asc'],
    ],
  },
  {
    // One direction throughout: a single row value on PostgreSQL
    sort: '-amount,-createdAt',
    order: [
      ['amount', 'desc'],
      ['created_at', 'desc'],
      ['id', 'desc'],
    ],
  },
  {
    // A few-valued lead, then a run of two ascending columns
    sort: 'status,amount',
    order: [
      ['status', 'asc'],
      ['amount', 'asc'],
      ['id', 'asc'],
    ],
  },
  {
    sort: 'shippedAt',
    order: [
      ['shipped_at', 'asc', true],
      ['id', 'asc'],
    ],
  },
  {
    sort: '-shippedAt',
    order: [
      ['shipped_at', 'desc', true],
      ['id', 'desc'],
    ],
  },
  {
    sort: '-shippedAt,amount',
    order: [
      ['shipped_at', 'desc', true],
      ['amount', 'asc'],
      ['id', 'asc'],
    ],
  },
  {
    sort: 'status,-shippedAt,createdAt',
    order: [
      ['status', 'asc'],
      ['shipped_at', 'desc', true],
      ['created_at', 'asc'],
      ['id', 'asc'],
    ],
  },
  {
    sort: 'shippedAt,-createdAt',
    order: [
      ['shipped_at', 'asc', true],
      ['created_at', 'desc'],
      ['id', 'desc'],
    ],
    filter: { amount: { gte: '100' } },
  },
]

const ids = (page: CursorPage<PgTestOrder>) => page.items.map((order) => Number(order.id))

test.group('Keyset walks', (group) => {
  let db: Database
  withSeededOrders(group, (opened) => {
    db = opened
  })

  for (const shape of SHAPES) {
    for (const size of [7, 25]) {
      test(`a walk sorted by "${shape.sort}"${shape.filter ? ' with a filter' : ''} in pages of ${size} visits every row once, forward and backward`, async ({
        assert,
      }) => {
        const expected = await expectedIds(db, shape.order, shape.filter)
        assert.isAbove(expected.length, 50)
        if (!shape.filter) assert.lengthOf(expected, ROWS)

        const forward: number[] = []
        let page = await orders.findPage(PgTestOrder, {
          sort: shape.sort,
          filter: shape.filter,
          paginate: { first: size },
        })
        assert.isFalse(page.hasPrev)
        forward.push(...ids(page))
        let previous = page
        while (page.hasNext) {
          page = await orders.findPage(PgTestOrder, {
            sort: shape.sort,
            filter: shape.filter,
            paginate: { first: size, after: page.nextCursor! },
          })
          assert.isTrue(page.hasPrev)
          // Stepping back from any page lands exactly on the page before it
          const back = await orders.findPage(PgTestOrder, {
            sort: shape.sort,
            filter: shape.filter,
            paginate: { last: size, before: page.prevCursor! },
          })
          assert.deepEqual(ids(back), ids(previous))
          forward.push(...ids(page))
          previous = page
        }
        assert.isNull(page.nextCursor)
        assert.deepEqual(forward, expected)

        const backward: number[][] = []
        page = await orders.findPage(PgTestOrder, {
          sort: shape.sort,
          filter: shape.filter,
          paginate: { last: size },
        })
        assert.isFalse(page.hasNext)
        backward.unshift(ids(page))
        while (page.hasPrev) {
          page = await orders.findPage(PgTestOrder, {
            sort: shape.sort,
            filter: shape.filter,
            paginate: { last: size, before: page.prevCursor! },
          })
          assert.isTrue(page.hasNext)
          backward.unshift(ids(page))
        }
        assert.deepEqual(backward.flat(), expected)
      })
    }
  }

  test('a plain query builder walks like a model query', async ({ assert }) => {
    const table = defineFilters(
      { table: 'pg_test_orders' },
      {
        fields: { shippedAt: { column: 'shipped_at', type: 'datetime', nullable: true } },
        sortable: ['shippedAt'],
      }
    ).with({ config: {} })
    const expected = await expectedIds(db, [
      ['shipped_at', 'desc', true],
      ['id', 'desc'],
    ])
    const seen: number[] = []
    let cursor: string | undefined
    do {
      const page: CursorPage<any> = await table.findPage(db.from('pg_test_orders'), {
        sort: '-shippedAt',
        paginate: { first: 30, after: cursor },
      })
      assert.notProperty(page.items[0], '__atrium_k0')
      seen.push(...page.items.map((row) => Number(row.id)))
      cursor = page.nextCursor ?? undefined
    } while (cursor)
    assert.deepEqual(seen, expected)
  })
})
