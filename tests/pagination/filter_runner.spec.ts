import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { defineFilters, toHttpPage } from '../../src/pagination/main.ts'
import { dialect, setupApp } from '../helpers.ts'
import { PgTestOrder, withSeededOrders } from './helpers.ts'

const orders = defineFilters(PgTestOrder, {
  fields: {
    amount: 'number',
    paid: 'boolean',
    customerId: 'integer',
    shippedAt: { type: 'datetime', nullable: true },
  },
  filterable: {
    status: ['eq', 'ne', 'in', 'notIn'],
    amount: ['gt', 'gte', 'lt', 'lte', 'between'],
    reference: ['contains', 'startsWith'],
    paid: ['eq'],
    customerId: ['eq'],
    shippedAt: ['isNull', 'notNull', 'gte'],
    createdAt: ['gte', 'lt'],
  },
  searchable: ['reference', 'status'],
  sortable: ['createdAt', 'amount', 'status', 'shippedAt'],
  includable: ['customer'],
  defaultSort: '-createdAt',
}).with({ config: { maxPageSize: 50 } })

async function all(db: Database, where: string) {
  const rows = await db.from('pg_test_orders').whereRaw(where).select('id').orderBy('id')
  return rows.map((row) => Number(row.id))
}

async function filtered(filter: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const query = orders.apply(PgTestOrder.query(), { filter, ...extra })
  const rows = await query
  return rows.map((row) => Number(row.id)).sort((a, b) => a - b)
}

test.group('FilterRunner', (group) => {
  let db: Database
  withSeededOrders(group, (opened) => {
    db = opened
  })

  test('eq, ne, in and notIn match the plain SQL', async ({ assert }) => {
    assert.deepEqual(await filtered({ status: 'paid' }), await all(db, "status = 'paid'"))
    assert.deepEqual(await filtered({ status: { ne: 'paid' } }), await all(db, "status <> 'paid'"))
    assert.deepEqual(
      await filtered({ status: { in: 'paid,refunded' } }),
      await all(db, "status in ('paid', 'refunded')")
    )
    assert.deepEqual(
      await filtered({ status: ['paid', 'failed'] }),
      await all(db, "status in ('paid', 'failed')")
    )
    assert.deepEqual(
      await filtered({ status: { notIn: 'paid,refunded' } }),
      await all(db, "status not in ('paid', 'refunded')")
    )
  })

  test('comparison operators and between coerce numbers', async ({ assert }) => {
    assert.deepEqual(await filtered({ amount: { gt: '100' } }), await all(db, 'amount > 100'))
    assert.deepEqual(await filtered({ amount: { gte: '100' } }), await all(db, 'amount >= 100'))
    assert.deepEqual(await filtered({ amount: { lt: 100 } }), await all(db, 'amount < 100'))
    assert.deepEqual(await filtered({ amount: { lte: '50' } }), await all(db, 'amount <= 50'))
    assert.deepEqual(
      await filtered({ amount: { between: '50,150' } }),
      await all(db, 'amount between 50 and 150')
    )
    assert.deepEqual(
      await filtered({ amount: { gte: '100', lte: '200' } }),
      await all(db, 'amount >= 100 and amount <= 200')
    )
  })

  test('booleans, integers and dates are coerced to the column type', async ({ assert }) => {
    const paid = await all(db, dialect() === 'pg' ? 'paid = true' : 'paid = 1')
    assert.deepEqual(await filtered({ paid: 'true' }), paid)
    assert.deepEqual(await filtered({ customerId: '2' }), await all(db, 'customer_id = 2'))
    const since = await filtered({ createdAt: { gte: '2025-01-01T00:00:00.020Z' } })
    const before = await filtered({ createdAt: { lt: '2025-01-01T00:00:00.020Z' } })
    assert.isAbove(since.length, 0)
    assert.isAbove(before.length, 0)
    assert.equal(since.length + before.length, 240)
  })

  test('contains is case-insensitive and treats % and _ literally; startsWith anchors', async ({
    assert,
  }) => {
    const carol = await filtered({ reference: { contains: 'CAROL' } })
    assert.lengthOf(carol, 60)
    assert.deepEqual(await filtered({ reference: { contains: 'carol' } }), carol)
    assert.lengthOf(await filtered({ reference: { contains: '%_o' } }), 60)
    assert.lengthOf(await filtered({ reference: { contains: '%x' } }), 0)
    assert.lengthOf(await filtered({ reference: { startsWith: 'ana-' } }), 60)
  })

  test('isNull and notNull split the rows; false negates each', async ({ assert }) => {
    const nulls = await all(db, 'shipped_at is null')
    const values = await all(db, 'shipped_at is not null')
    assert.isAbove(nulls.length, 0)
    assert.isAbove(values.length, 0)
    assert.deepEqual(await filtered({ shippedAt: { isNull: 'true' } }), nulls)
    assert.deepEqual(await filtered({ shippedAt: { notNull: 'true' } }), values)
    assert.deepEqual(await filtered({ shippedAt: { isNull: 'false' } }), values)
    assert.deepEqual(await filtered({ shippedAt: { notNull: 'false' } }), nulls)
    assert.deepEqual(await filtered({ shippedAt: { isNull: false } }), values)
    assert.deepEqual(await filtered({ shippedAt: { notNull: '0' } }), nulls)
  })

  test('an empty filter value is no filter, whatever the operator', async ({ assert }) => {
    const every = await all(db, '1 = 1')
    for (const filter of [
      { status: '' },
      { status: { eq: '' } },
      { status: { in: '' } },
      { amount: { gte: '' } },
      { amount: { between: '' } },
      { shippedAt: { isNull: '' } },
      { shippedAt: { notNull: '' } },
      { createdAt: { gte: '' } },
      { reference: { contains: '' } },
      { paid: '' },
    ]) {
      assert.deepEqual(await filtered(filter), every, JSON.stringify(filter))
    }
    // The names are still checked: a blank value of an undeclared filter is a 400
    assert.throws(
      () => orders.parse({ filter: { color: '' } }),
      'Filtering by "color" is not allowed'
    )
    assert.throws(
      () => orders.parse({ filter: { status: { gte: '' } } }),
      'Operator "gte" is not allowed on filter "status"'
    )
  })

  test('search ORs a case-insensitive match over the searchable fields', async ({ assert }) => {
    const ids = await filtered({}, { search: 'BOB' })
    assert.lengthOf(ids, 60)
    const refunded = await filtered({}, { search: 'REFUND' })
    assert.deepEqual(refunded, await all(db, "status = 'refunded'"))
  })

  test('include preloads declared relations', async ({ assert }) => {
    const page = await orders.findPage(PgTestOrder, { include: 'customer', paginate: { first: 3 } })
    assert.lengthOf(page.items, 3)
    for (const order of page.items) {
      assert.equal(order.customer.id, order.customerId)
    }
  })

  test('findAndCount returns an offset page with the total', async ({ assert }) => {
    const page = await orders.findAndCount(PgTestOrder, {
      filter: { status: 'paid' },
      sort: 'amount',
      page: '2',
      perPage: '10',
    })
    const paid = await all(db, "status = 'paid'")
    const total = paid.length
    assert.equal(page.total, total)
    assert.equal(page.page, 2)
    assert.lengthOf(page.items, 10)
    assert.isTrue(page.items.every((order) => order.status === 'paid'))
    const amounts = page.items.map((order) => order.amount)
    assert.deepEqual(
      amounts,
      [...amounts].sort((a, b) => a - b)
    )
  })

  test('first defaults to 25 and is clamped to maxPageSize unless trusted', async ({ assert }) => {
    const defaults = orders.with({ config: {} })
    const byDefault = await defaults.findPage(PgTestOrder, {})
    assert.lengthOf(byDefault.items, 25)
    const clamped = await orders.findPage(PgTestOrder, { paginate: { first: 500 } })
    assert.lengthOf(clamped.items, 50)
    const trusted = await orders.findPage(
      PgTestOrder,
      { paginate: { first: 120 } },
      { trustedPageSize: true }
    )
    assert.lengthOf(trusted.items, 120)
    const small = orders.with({ definition: { maxPageSize: 10 } })
    const capped = await small.findPage(PgTestOrder, { paginate: { first: 40 } })
    assert.lengthOf(capped.items, 10)
  })

  test('perPage and paginate[last] are clamped to maxPageSize unless trusted', async ({
    assert,
  }) => {
    const offset = await orders.findAndCount(PgTestOrder, { perPage: '500' })
    assert.equal(offset.perPage, 50)
    assert.lengthOf(offset.items, 50)
    assert.equal(offset.lastPage, Math.ceil(240 / 50))
    const trustedOffset = await orders.findAndCount(
      PgTestOrder,
      { perPage: 120 },
      { trustedPageSize: true }
    )
    assert.lengthOf(trustedOffset.items, 120)

    const last = await orders.findPage(PgTestOrder, { paginate: { last: '500' } })
    assert.lengthOf(last.items, 50)
    assert.isTrue(last.hasPrev)
    const trustedLast = await orders.findPage(
      PgTestOrder,
      { paginate: { last: 120 } },
      { trustedPageSize: true }
    )
    assert.lengthOf(trustedLast.items, 120)
    const small = orders.with({ definition: { maxPageSize: 10 } })
    const smallOffset = await small.findAndCount(PgTestOrder, { perPage: 40 })
    assert.lengthOf(smallOffset.items, 10)
    const smallLast = await small.findPage(PgTestOrder, { paginate: { last: 40 } })
    assert.lengthOf(smallLast.items, 10)
  })

  test('the total count is opt-in', async ({ assert }) => {
    const page = await orders.findPage(PgTestOrder, { filter: { status: 'paid' } })
    assert.isUndefined(page.total)
    const counted = await orders.findPage(
      PgTestOrder,
      { filter: { status: 'paid' } },
      { withTotal: true }
    )
    const paid = await all(db, "status = 'paid'")
    assert.equal(counted.total, paid.length)
  })

  test('applyDynamic applies a definition given at call time', async ({ assert }) => {
    assert.throws(
      () => orders.apply(PgTestOrder.query(), { sort: 'reference' }),
      'Sorting by "reference" is not allowed'
    )
    const rows = await orders.applyDynamic(
      PgTestOrder.query(),
      { sort: '-reference' },
      { sortable: ['reference'] }
    )
    const references = rows.map((row) => row.reference)
    assert.lengthOf(references, 240)
    assert.equal(references[0], [...references].sort().reverse()[0])
  })

  test('the query-string form from ctx.request.qs() maps to { data, pageInfo }', async ({
    assert,
  }) => {
    const { url } = await setupApp({
      routes(router) {
        router.get('/orders', async ({ request }) => {
          return toHttpPage(await orders.findPage(PgTestOrder, request.qs()))
        })
      },
    })
    const query =
      'filter[status][in]=paid,refunded&filter[amount][gte]=100&sort=-createdAt,amount&paginate[first]=5'
    const first = await fetch(`${url}/orders?${query}`)
    assert.equal(first.status, 200)
    const body = (await first.json()) as any
    assert.lengthOf(body.data, 5)
    assert.isTrue(body.pageInfo.hasNextPage)
    assert.isFalse(body.pageInfo.hasPreviousPage)
    assert.isString(body.pageInfo.endCursor)
    assert.isTrue(
      body.data.every((row: any) => ['paid', 'refunded'].includes(row.status) && row.amount >= 100)
    )
    const second = await fetch(
      `${url}/orders?${query}&paginate[after]=${encodeURIComponent(body.pageInfo.endCursor)}`
    )
    const next = (await second.json()) as any
    assert.isTrue(next.pageInfo.hasPreviousPage)
    assert.notDeepEqual(
      next.data.map((row: any) => row.id),
      body.data.map((row: any) => row.id)
    )
  })
  test('findPage pages a raw source, such as a table carrying an index hint', async ({
    assert,
  }) => {
    const plain = defineFilters(
      { table: 'pg_test_orders' },
      { fields: { createdAt: { column: 'created_at', type: 'datetime' } }, sortable: ['createdAt'] }
    ).with({ config: {} })
    const expected = await db
      .from('pg_test_orders')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
    const seen: number[] = []
    let after: string | undefined
    do {
      const page = await plain.findPage(
        // Lucid's from() types omit raw sources, which Knex accepts
        db.from(db.raw('??', ['pg_test_orders']) as any),
        {
          sort: '-createdAt',
          paginate: { first: 40, after },
        }
      )
      seen.push(...page.items.map((row) => Number(row.id)))
      assert.isTrue(
        page.items.every((row) => row.status !== undefined),
        'rows keep their columns'
      )
      after = page.hasNext ? page.endCursor! : undefined
    } while (after)
    assert.deepEqual(
      seen,
      expected.map((row) => Number(row.id))
    )
  })
})
