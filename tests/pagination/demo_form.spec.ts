import { test } from '@japa/runner'
import { ExceptionHandler } from '@adonisjs/core/http'
import { activeQuery } from '../../examples/demo/features/pagination.ts'
import { DEFAULT_ORDER_ROWS, orderCount } from '../../examples/demo/database/seed_orders.ts'
import { defineFilters, toHttpPage } from '../../src/pagination/main.ts'
import { setupApp } from '../helpers.ts'
import { PgTestOrder, withSeededOrders } from './helpers.ts'

/** The demo's definition of orders, over the test table */
const orders = defineFilters(PgTestOrder, {
  fields: { amount: 'integer', shippedAt: { type: 'datetime', nullable: true } },
  filterable: {
    status: ['eq', 'in'],
    amount: ['gte', 'lte', 'between'],
    shippedAt: ['isNull', 'notNull', 'gte', 'lte'],
    createdAt: ['gte', 'lte'],
  },
  searchable: ['reference'],
  sortable: ['createdAt', 'amount', 'shippedAt', 'status'],
  defaultSort: '-createdAt',
}).with({ config: {} })

/** What the demo's form sends with every field left at its default, the sort changed */
const DEFAULT_FORM =
  'filter[status]=&filter[amount][gte]=&filter[shippedAt][isNull]=&search=&sort=-amount,createdAt&paginate[first]=10'

test.group('Demo pagination form', (group) => {
  withSeededOrders(group)

  async function serve() {
    const { url } = await setupApp({
      async routes(router) {
        const { default: app } = await import('@adonisjs/core/services/app')
        const server = await app.container.make('server')
        server.errorHandler(async () => ({ default: ExceptionHandler }))
        router.get('/orders', async ({ request }) => {
          const page = await orders.findPage(PgTestOrder, request.qs())
          return { ...toHttpPage(page), next: activeQuery(request.qs()) }
        })
      },
    })
    return async (query: string) => {
      const response = await fetch(`${url}/orders?${query}`)
      return { status: response.status, body: (await response.json()) as any }
    }
  }

  test('the form in its default state pages every order, as no filter does', async ({ assert }) => {
    const get = await serve()
    const blank = await get(DEFAULT_FORM)
    assert.equal(blank.status, 200, JSON.stringify(blank.body))
    const plain = await get('sort=-amount,createdAt&paginate[first]=10')
    assert.deepEqual(
      blank.body.data.map((order: any) => order.id),
      plain.body.data.map((order: any) => order.id)
    )
    // The Next link carries exactly the active parameters: no blank filter
    assert.equal(decodeURIComponent(blank.body.next), 'sort=-amount,createdAt&paginate[first]=10')
  })

  test('page 2 reached by the Next link filters exactly as page 1 did', async ({ assert }) => {
    const get = await serve()
    const query =
      'filter[status]=paid,refunded&filter[amount][gte]=100&filter[createdAt][gte]=2025-01-01&filter[shippedAt][isNull]=false&search=-1&sort=-amount,createdAt&paginate[first]=5'
    const first = await get(query)
    assert.equal(first.status, 200)
    assert.equal(first.body.next, query)
    const second = await get(`${first.body.next}&paginate[after]=${first.body.pageInfo.endCursor}`)
    assert.equal(second.status, 200, JSON.stringify(second.body))
    const both = await get(query.replace('paginate[first]=5', 'paginate[first]=10'))
    assert.deepEqual(
      [...first.body.data, ...second.body.data].map((order: any) => order.id),
      both.body.data.map((order: any) => order.id)
    )
    assert.isTrue(
      second.body.data.every(
        (order: any) =>
          ['paid', 'refunded'].includes(order.status) &&
          order.amount >= 100 &&
          order.shippedAt !== null
      )
    )
  })

  test('the demo seeds 10,000 orders unless DEMO_ORDERS asks for more', ({ assert }) => {
    assert.equal(orderCount(undefined), DEFAULT_ORDER_ROWS)
    assert.equal(DEFAULT_ORDER_ROWS, 10_000)
    assert.equal(orderCount(''), 10_000)
    assert.equal(orderCount('1000000'), 1_000_000)
    assert.throws(() => orderCount('a million'), /Invalid DEMO_ORDERS="a million"/)
    assert.throws(() => orderCount('-5'), /expected a whole number from 1 to 10000000/)
  })
})
