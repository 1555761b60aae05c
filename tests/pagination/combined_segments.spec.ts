import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import {
  defineFilters,
  LucidAdapter,
  type CursorPage,
  type KeysetAdapter,
} from '../../src/pagination/main.ts'
import { PgTestCustomer, PgTestOrder, expectedIds, withSeededOrders } from './helpers.ts'
import { dialect } from '../helpers.ts'

/**
 * The Lucid adapter, counting the pages it ran as one statement.
 */
class CountingAdapter extends LucidAdapter {
  combinedPages = 0

  combineKeysetSegments(...args: Parameters<LucidAdapter['combineKeysetSegments']>) {
    const query = super.combineKeysetSegments(...args)
    if (query) this.combinedPages++
    return query
  }
}

const adapter = new CountingAdapter({ combineSegments: true })

const orders = defineFilters(PgTestOrder, {
  fields: {
    amount: 'number',
    shippedAt: { type: 'datetime', nullable: true },
  },
  sortable: ['createdAt', 'shippedAt', 'status', 'amount'],
  includable: ['customer'],
}).with({
  config: { maxPageSize: 100 },
  adapter,
})

/**
 * Sorts whose pages have several segments: a few-valued leading column (a tie
 * and what lies beyond it), a nullable one (its NULL block), precise timestamps.
 */
const SHAPES: { sort: string; order: [string, 'asc' | 'desc', boolean?][] }[] = [
  {
    sort: 'status,-amount',
    order: [
      ['status', 'asc'],
      ['amount', 'desc'],
      ['id', 'desc'],
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
    sort: '-shippedAt',
    order: [
      ['shipped_at', 'desc', true],
      ['id', 'desc'],
    ],
  },
  {
    sort: 'shippedAt,-createdAt',
    order: [
      ['shipped_at', 'asc', true],
      ['created_at', 'desc'],
      ['id', 'desc'],
    ],
  },
]

const ids = (page: CursorPage<any>) => page.items.map((row) => Number(row.id))

test.group('Keyset segments as one statement', (group) => {
  let db: Database
  withSeededOrders(group, (opened) => {
    db = opened
  })

  for (const shape of SHAPES) {
    test(`a walk sorted by "${shape.sort}" with preloads runs one statement per page and visits every row once, forward and backward`, async ({
      assert,
    }) => {
      const expected = await expectedIds(db, shape.order)
      const all = await PgTestCustomer.all()
      const customers = new Map(all.map((customer) => [customer.id, customer.name]))
      const combinedBefore = adapter.combinedPages

      const visit = async (paginate: Record<string, unknown>) => {
        const statements: string[] = []
        const page = await orders.findPage(
          PgTestOrder,
          { sort: shape.sort, include: 'customer', paginate },
          { onQuery: (query) => statements.push(query.toSQL().sql) }
        )
        assert.lengthOf(statements, 1, 'one statement per page')
        for (const order of page.items) {
          assert.instanceOf(order, PgTestOrder)
          assert.equal(order.customer.name, customers.get(order.customerId))
          assert.deepEqual(Object.keys(order.$extras), [])
        }
        return page
      }

      const forward: number[] = []
      let page = await visit({ first: 7 })
      forward.push(...ids(page))
      while (page.hasNext) {
        page = await visit({ first: 7, after: page.nextCursor! })
        forward.push(...ids(page))
      }
      assert.deepEqual(forward, expected)

      const backward: number[][] = []
      page = await visit({ last: 7 })
      backward.unshift(ids(page))
      while (page.hasPrev) {
        page = await visit({ last: 7, before: page.prevCursor! })
        backward.unshift(ids(page))
      }
      assert.deepEqual(backward.flat(), expected)
      assert.isAbove(adapter.combinedPages, combinedBefore, 'some pages combined several segments')
    })
  }

  test('a page across a status boundary takes the rest of the tie and the next status in one statement', async ({
    assert,
  }) => {
    const expected = await expectedIds(db, SHAPES[0].order)
    const all = await PgTestOrder.all()
    const statuses = new Map(all.map((order) => [Number(order.id), order.status]))
    // The cursor of the third row before the first status ends
    const boundary = expected.findIndex(
      (id: number) => statuses.get(id) !== statuses.get(expected[0])
    )
    const start = await orders.findPage(PgTestOrder, {
      sort: 'status,-amount',
      paginate: { first: boundary - 3 },
    })
    const statements: string[] = []
    const page = await orders.findPage(
      PgTestOrder,
      {
        sort: 'status,-amount',
        include: 'customer',
        paginate: { first: 10, after: start.endCursor! },
      },
      { onQuery: (query) => statements.push(query.toSQL().sql) }
    )
    assert.deepEqual(ids(page), expected.slice(boundary - 3, boundary + 7))
    assert.lengthOf(statements, 1)
    // Two UNION ALL branches, or on MySQL/MariaDB the tie OR-ed with the next statuses
    if (dialect() === 'mysql') {
      assert.match(statements[0], /\) or `pg_test_orders`\.`status` > \?\)/)
    } else {
      assert.lengthOf(statements[0].toLowerCase().split(' union all '), 2)
    }
    assert.isTrue(page.items.every((order) => order.customer instanceof PgTestCustomer))
    assert.isTrue(page.hasPrev)
    assert.isTrue(page.hasNext)
  })

  test('a raw source walks through the combined statement, precise timestamps included', async ({
    assert,
  }) => {
    const table = defineFilters(
      { table: 'pg_test_orders' },
      {
        fields: {
          createdAt: { column: 'created_at', type: 'datetime' },
          shippedAt: { column: 'shipped_at', type: 'datetime', nullable: true },
        },
        sortable: ['status', 'shippedAt', 'createdAt'],
      }
    ).with({ config: {}, adapter: new LucidAdapter({ combineSegments: true }) })
    const expected = await expectedIds(db, SHAPES[1].order)
    const seen: number[] = []
    let after: string | undefined
    do {
      const statements: string[] = []
      const page: CursorPage<any> = await table.findPage(
        // Lucid's from() types omit raw sources, which Knex accepts
        db.from(db.raw('??', ['pg_test_orders']) as any),
        { sort: 'status,-shippedAt,createdAt', paginate: { first: 9, after } },
        { onQuery: (query) => statements.push(query.toSQL().sql) }
      )
      assert.lengthOf(statements, 1)
      assert.notProperty(page.items[0], '__atrium_k2')
      assert.isTrue(
        page.items.every((row) => row.status !== undefined),
        'rows keep their columns'
      )
      seen.push(...ids(page))
      after = page.hasNext ? page.endCursor! : undefined
    } while (after)
    assert.deepEqual(seen, expected)
  })

  test('an adapter without combineKeysetSegments runs the segments one after the other', async ({
    assert,
  }) => {
    const lucid = new LucidAdapter()
    const plain: KeysetAdapter = {
      getResult: (query) => lucid.getResult(query),
      getPrimaryKey: (query) => lucid.getPrimaryKey(query),
      applyKeysetPagination: (query, keyset, segment) =>
        lucid.applyKeysetPagination(query, keyset, segment),
      applyKeysetOrderAndLimit: (query, keyset, limit) =>
        lucid.applyKeysetOrderAndLimit(query, keyset, limit),
    }
    const sequential = orders.with({ adapter: plain })
    const expected = await expectedIds(db, SHAPES[0].order)
    const seen: number[] = []
    let statements = 0
    let after: string | undefined
    do {
      const page: CursorPage<PgTestOrder> = await sequential.findPage(
        PgTestOrder,
        { sort: 'status,-amount', paginate: { first: 11, after } },
        { onQuery: () => statements++ }
      )
      seen.push(...ids(page))
      after = page.hasNext ? page.endCursor! : undefined
    } while (after)
    assert.deepEqual(seen, expected)
    assert.isAbove(statements, Math.ceil(expected.length / 11), 'some pages ran two queries')
  })
})
