import { test } from '@japa/runner'
import { ExceptionHandler } from '@adonisjs/core/http'
import {
  LucidAdapter,
  decodeCursor,
  defineFilters,
  encodeCursor,
  errors,
  keysetFingerprint,
  toHttpPage,
} from '../../src/pagination/main.ts'
import { setupApp } from '../helpers.ts'
import { PgTestOrder, withSeededOrders } from './helpers.ts'

const orders = defineFilters(PgTestOrder, {
  fields: { amount: 'number', paid: 'boolean', shippedAt: { type: 'datetime', nullable: true } },
  filterable: {
    status: ['eq', 'in'],
    amount: ['gte', 'between'],
    paid: ['eq'],
    createdAt: ['gte'],
    reference: ['contains'],
  },
  searchable: ['reference'],
  sortable: ['createdAt', 'amount', 'shippedAt'],
  includable: ['customer'],
  defaultSort: '-createdAt',
}).with({ config: {} })

const BAD_REQUESTS: [string, string][] = [
  ['filter[color]=red', 'Filtering by "color" is not allowed'],
  ['filter[status][like]=pa', 'Unknown filter operator "like" on "status"'],
  ['filter[status][gte]=paid', 'Operator "gte" is not allowed on filter "status"'],
  [
    'filter[amount][gte]=lots',
    'Invalid value for filter[amount][gte]: expected a number, received "lots"',
  ],
  [
    'filter[amount][between]=1',
    'Invalid value for filter[amount][between]: expected two values "from,to"',
  ],
  ['filter[paid]=maybe', 'Invalid value for filter[paid]: expected a boolean, received "maybe"'],
  [
    'filter[createdAt][gte]=yesterday',
    'Invalid value for filter[createdAt][gte]: expected an ISO 8601 date, received "yesterday"',
  ],
  [
    'filter[status][in]=paid,,x',
    'Invalid value for filter[status][in]: expected a comma separated list',
  ],
  ['filter=paid', 'Invalid "filter": expected filter[<field>]=<value> parameters'],
  ['sort=-color', 'Sorting by "color" is not allowed'],
  ['include=customer,secrets', 'Including "secrets" is not allowed'],
  ['page=0', 'Invalid value for page: expected a positive integer, received "0"'],
  ['perPage=ten', 'Invalid value for perPage: expected a positive integer, received "ten"'],
  [
    'paginate[first]=-3',
    'Invalid value for paginate[first]: expected a positive integer, received "-3"',
  ],
  [
    'paginate[last]=1.5',
    'Invalid value for paginate[last]: expected a positive integer, received "1.5"',
  ],
  ['paginate[after][x]=1', 'Invalid value for paginate[after]: expected a string'],
]

test.group('Pagination errors', (group) => {
  withSeededOrders(group)

  test('every undeclared or uncoercible input is a 400 naming it, never a 500', async ({
    assert,
  }) => {
    const { url } = await setupApp({
      async routes(router) {
        // The app's exception handler, as in a real app: it lets the error render itself
        const { default: server } = await import('@adonisjs/core/services/server')
        server.errorHandler(async () => ({ default: ExceptionHandler }))
        router.get('/cursor', async ({ request }) =>
          toHttpPage(await orders.findPage(PgTestOrder, request.qs()))
        )
        router.get('/offset', async ({ request }) => orders.findAndCount(PgTestOrder, request.qs()))
      },
    })
    for (const [query, message] of BAD_REQUESTS) {
      for (const path of ['cursor', 'offset']) {
        const response = await fetch(`${url}/${path}?${query}`)
        assert.equal(response.status, 400, `${path}?${query}`)
        const body = (await response.json()) as any
        assert.equal(body.errors[0].message, message, query)
        assert.equal(body.errors[0].code, 'E_INVALID_PAGINATION_QUERY')
      }
    }
    const search = defineFilters(PgTestOrder, {}).with({ config: {} })
    assert.throws(() => search.parse({ search: 'ana' }), 'Search is not allowed here')
  })

  test('the error is an Exception with status 400', async ({ assert }) => {
    try {
      orders.parse({ sort: 'nope' })
      assert.fail('expected a throw')
    } catch (error) {
      assert.instanceOf(error, errors.InvalidPaginationQueryException)
      assert.equal((error as any).status, 400)
      assert.equal((error as any).parameter, 'sort')
    }
  })

  test('an adapter lacking one of the four methods throws the spec message at call time', async ({
    assert,
  }) => {
    const adapter = new LucidAdapter() as any
    const broken = orders.with({
      adapter: {
        getResult: adapter.getResult.bind(adapter),
        getPrimaryKey: adapter.getPrimaryKey.bind(adapter),
        applyKeysetPagination: adapter.applyKeysetPagination.bind(adapter),
      } as any,
    })
    await assert.rejects(
      () => broken.findPage(PgTestOrder, {}),
      'findPage requires an adapter implementing getResult, getPrimaryKey, applyKeysetPagination and applyKeysetOrderAndLimit'
    )
    // apply and findAndCount do not need the keyset methods
    const offsetPage = await broken.findAndCount(PgTestOrder, {})
    assert.isAbove(offsetPage.total, 0)
  })

  test('a malformed, wrong-length, foreign-sort, wrongly typed or oversized cursor returns the first page', async ({
    assert,
  }) => {
    const first = await orders.findPage(PgTestOrder, { paginate: { first: 5 } })
    const firstIds = first.items.map((order) => order.id)
    const second = await orders.findPage(PgTestOrder, {
      paginate: { first: 5, after: first.nextCursor! },
    })
    assert.notDeepEqual(
      second.items.map((order) => order.id),
      firstIds
    )

    const keyset = [
      { field: 'createdAt', direction: 'desc' as const },
      { field: 'id', direction: 'desc' as const },
    ]
    const fingerprint = keysetFingerprint(keyset)
    const amountSorted = await orders.findPage(PgTestOrder, {
      sort: 'amount',
      paginate: { first: 5 },
    })
    const cursors = {
      'malformed': 'not a cursor!',
      'not base64 JSON': 'bm90IGpzb24',
      'wrong length': encodeCursor([new Date()], { fingerprint }),
      'another sort': amountSorted.nextCursor!,
      'wrong types': encodeCursor(['yesterday', 'x'], { fingerprint }),
      'null in a non-nullable column': encodeCursor([null, 3], { fingerprint }),
      'oversized': encodeCursor([new Date(), 'x'.repeat(3000)], { fingerprint }),
    }
    for (const [name, cursor] of Object.entries(cursors)) {
      for (const paginate of [{ after: cursor }, { before: cursor }]) {
        const page = await orders.findPage(PgTestOrder, { paginate: { first: 5, ...paginate } })
        assert.deepEqual(
          page.items.map((order) => order.id),
          firstIds,
          name
        )
        assert.isFalse(page.hasPrev, name)
        assert.isTrue(page.hasNext, name)
      }
    }
  })

  test('after wins when after and before are both sent', async ({ assert }) => {
    const first = await orders.findPage(PgTestOrder, { paginate: { first: 5 } })
    const second = await orders.findPage(PgTestOrder, {
      paginate: { first: 5, after: first.nextCursor! },
    })
    const both = await orders.findPage(PgTestOrder, {
      paginate: { first: 5, after: first.nextCursor!, before: second.nextCursor! },
    })
    assert.deepEqual(
      both.items.map((order) => order.id),
      second.items.map((order) => order.id)
    )
  })

  test('signed cursors: a tampered or unsigned cursor returns the first page', async ({
    assert,
  }) => {
    const signed = orders.with({ config: { cursorSecret: 'a-long-test-secret' } })
    const first = await signed.findPage(PgTestOrder, { paginate: { first: 4 } })
    const cursor = first.nextCursor!
    assert.match(cursor, /^[\w-]+\.[\w-]+$/)
    const second = await signed.findPage(PgTestOrder, { paginate: { first: 4, after: cursor } })
    assert.isTrue(second.hasPrev)

    const [payload, signature] = cursor.split('.')
    const values = decodeCursor(payload)!
    values[1] = Number(values[1]) + 1
    const forged = `${encodeCursor(values, {
      fingerprint: keysetFingerprint([
        { field: 'createdAt', direction: 'desc' },
        { field: 'id', direction: 'desc' },
      ]),
    })}.${signature}`
    for (const bad of [payload, forged, `${payload}.${signature.slice(0, -2)}xx`]) {
      const page = await signed.findPage(PgTestOrder, { paginate: { first: 4, after: bad } })
      assert.deepEqual(
        page.items.map((order) => order.id),
        first.items.map((order) => order.id)
      )
    }
    // A signed cursor means nothing to a runner with another secret
    const other = orders.with({ config: { cursorSecret: 'another-secret' } })
    const page = await other.findPage(PgTestOrder, { paginate: { first: 4, after: cursor } })
    assert.isFalse(page.hasPrev)
  })
})
