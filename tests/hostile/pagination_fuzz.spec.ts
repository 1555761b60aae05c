import { test } from '@japa/runner'
import { ExceptionHandler } from '@adonisjs/core/http'
import {
  defineFilters,
  encodeCursor,
  keysetFingerprint,
  toHttpPage,
} from '../../src/pagination/main.ts'
import { dialect, setupApp } from '../helpers.ts'
import { PgTestOrder, random, withSeededOrders } from '../pagination/helpers.ts'

/**
 * Every field declared with the type of its column (pg_test_orders: INTEGER
 * keys and amounts, a BOOLEAN, microsecond timestamps), as an app would.
 */
const orders = defineFilters(PgTestOrder, {
  fields: {
    amount: 'integer',
    customerId: 'integer',
    paid: 'boolean',
    shippedAt: { type: 'datetime', nullable: true },
  },
  filterable: {
    id: ['eq', 'in', 'gte', 'between'],
    status: ['eq', 'ne', 'in', 'notIn'],
    amount: ['eq', 'gt', 'gte', 'lt', 'lte', 'between', 'in'],
    customerId: ['eq', 'in'],
    paid: ['eq'],
    shippedAt: ['isNull', 'notNull', 'gte', 'lte'],
    createdAt: ['gte', 'lte', 'between'],
    reference: ['eq', 'contains', 'startsWith'],
  },
  searchable: ['reference', 'status'],
  sortable: ['createdAt', 'amount', 'status', 'shippedAt', 'reference', 'id'],
  includable: ['customer'],
  defaultSort: '-createdAt',
}).with({ config: { maxPageSize: 50 } })

const SORTS = ['-createdAt', 'status,-amount', '-shippedAt', 'shippedAt,id', 'reference', '-id']

function forge(values: unknown[], sort = '-createdAt') {
  const keyset = sort.split(',').map((part) => ({
    field: part.replace(/^-/, ''),
    direction: part.startsWith('-') ? ('desc' as const) : ('asc' as const),
  }))
  if (!keyset.some(({ field }) => field === 'id')) {
    keyset.push({ field: 'id', direction: keyset.at(-1)!.direction })
  }
  const body = { v: values, f: keysetFingerprint(keyset) }
  return Buffer.from(JSON.stringify(body)).toString('base64url')
}

const DATE = { d: '2025-01-01T00:00:00.000Z', p: '2025-01-01 00:00:00.000001' }

/**
 * Inputs PostgreSQL refused with a 500 (22P02, 22003, 22007, 22008, 22021),
 * and their siblings: each must be a 400 naming the parameter on every database.
 */
const ATTACKS: [string, string, ('cursor' | 'offset')[]?][] = [
  [`paginate[after]=${forge([{ ...DATE, p: 'garbage' }, 1])}`, 'paginate[after]', ['cursor']],
  [
    `paginate[after]=${forge([{ ...DATE, p: '2025-13-45 00:00:00' }, 1])}`,
    'paginate[after]',
    ['cursor'],
  ],
  [
    `paginate[before]=${forge([{ d: '+275760-09-13T00:00:00.000Z' }, 1])}`,
    'paginate[before]',
    ['cursor'],
  ],
  [`paginate[after]=${forge([DATE, 'abc'])}`, 'paginate[after]', ['cursor']],
  [`paginate[after]=${forge([DATE, 1.5])}`, 'paginate[after]', ['cursor']],
  [`paginate[after]=${forge([DATE, 1e300])}`, 'paginate[after]', ['cursor']],
  [`paginate[after]=${forge([DATE, '99999999999999999999'])}`, 'paginate[after]', ['cursor']],
  [`paginate[after]=${forge([DATE, 2 ** 31])}`, 'paginate[after]', ['cursor']],
  [`paginate[after]=${forge([null, 1])}`, 'paginate[after]', ['cursor']],
  [
    `sort=status,-amount&paginate[after]=${forge(['paid\u0000', 1, 1], 'status,-amount')}`,
    'paginate[after]',
    ['cursor'],
  ],
  [
    `sort=status,-amount&paginate[after]=${forge(['paid', 'lots', 1], 'status,-amount')}`,
    'paginate[after]',
    ['cursor'],
  ],
  [
    `sort=status,-amount&paginate[after]=${forge(['paid', 1e300, 1], 'status,-amount')}`,
    'paginate[after]',
    ['cursor'],
  ],
  [`sort=-amount&paginate[after]=${forge([DATE, 1])}`, 'paginate[after]', ['cursor']],
  ['filter[id]=abc', 'filter[id]'],
  ['filter[id][in]=1,abc', 'filter[id][in]'],
  ['filter[id][gte]=1.5', 'filter[id][gte]'],
  ['filter[id][gte]=1e300', 'filter[id][gte]'],
  ['filter[amount][gte]=99999999999999999999', 'filter[amount][gte]'],
  ['filter[amount][gte]=3000000000', 'filter[amount][gte]'],
  ['filter[amount][between]=1,99999999999999999999', 'filter[amount][between]'],
  ['filter[customerId]=-2147483649', 'filter[customerId]'],
  ['filter[amount][lt]=Infinity', 'filter[amount][lt]'],
  ['search=ana%00', 'search'],
  ['filter[reference]=ana%00', 'filter[reference]'],
  ['filter[reference][contains]=%00', 'filter[reference][contains]'],
  ['filter[status][in]=paid,%00', 'filter[status][in]'],
  ['filter[createdAt][gte]=0000-01-01', 'filter[createdAt][gte]'],
  ['filter[createdAt][gte]=2025-13-45', 'filter[createdAt][gte]'],
  ['filter[createdAt][between]=2025-01-01,99999-01-01', 'filter[createdAt][between]'],
  ['filter[shippedAt][isNull]=maybe', 'filter[shippedAt][isNull]'],
  ['sort=-amount%00', 'sort'],
  ['sort[a]=amount', 'sort'],
  ['include=customer%00', 'include'],
  ['include[a]=customer', 'include'],
  ['paginate[first]=abc', 'paginate[first]', ['cursor']],
  ['paginate[first]=99999999999999999999', 'paginate[first]', ['cursor']],
  ['paginate[first]=1e3', 'paginate[first]', ['cursor']],
  ['paginate[last][]=5', 'paginate[last]', ['cursor']],
  ['paginate=5', 'paginate'],
  ['page=abc', 'page', ['offset']],
  ['page=99999999999999999999', 'page', ['offset']],
  ['perPage[]=5', 'perPage', ['offset']],
  ['filter[amount][gte][a][b][c]=1', 'filter[amount][gte]'],
  ['filter[amount][gte][]=1', 'filter[amount][gte]'],
  ['search[]=ana', 'search'],
  ['search[a][b]=ana', 'search'],
  ['paginate[after][]=x', 'paginate[after]', ['cursor']],
  [`search=${'a'.repeat(1100)}`, 'search'],
  [`filter[reference][contains]=${'x'.repeat(1100)}`, 'filter[reference][contains]'],
  [
    `filter[status][in]=${Array.from({ length: 600 }, () => 'paid').join(',')}`,
    'filter[status][in]',
  ],
]

/** Pieces the fuzzer builds query strings from */
const KEYS = [
  'filter[id]',
  'filter[id][in]',
  'filter[id][between]',
  'filter[status]',
  'filter[status][in]',
  'filter[amount][gte]',
  'filter[amount][between]',
  'filter[customerId]',
  'filter[paid]',
  'filter[shippedAt][isNull]',
  'filter[shippedAt][notNull]',
  'filter[shippedAt][gte]',
  'filter[createdAt][lte]',
  'filter[reference][contains]',
  'filter[reference][startsWith]',
  'filter[nope]',
  'filter[amount][nope]',
  'filter[amount][gte][x]',
  'filter[status][]',
  'search',
  'search[]',
  'sort',
  'include',
  'paginate[first]',
  'paginate[last]',
  'paginate[after]',
  'paginate[before]',
  'page',
  'perPage',
]

test.group('Hostile input: pagination', (group) => {
  withSeededOrders(group)

  async function serve() {
    const { url } = await setupApp({
      async routes(router) {
        // The app's exception handler, as in a real app: it lets the error render itself.
        // The server of the app being set up (services/server keeps the first app's)
        const { default: app } = await import('@adonisjs/core/services/app')
        const server = await app.container.make('server')
        server.errorHandler(async () => ({ default: ExceptionHandler }))
        router.get('/cursor', async ({ request }) =>
          toHttpPage(await orders.findPage(PgTestOrder, request.qs()))
        )
        router.get('/offset', async ({ request }) => orders.findAndCount(PgTestOrder, request.qs()))
      },
    })
    return url
  }

  test('values that do not fit their column are a 400 naming the parameter, never a 500', async ({
    assert,
  }) => {
    const url = await serve()
    for (const [query, parameter, paths = ['cursor', 'offset']] of ATTACKS) {
      for (const path of paths) {
        const response = await fetch(`${url}/${path}?${query}`)
        const label = `${dialect()} /${path}?${query.slice(0, 120)}`
        assert.equal(response.status, 400, label)
        const body = (await response.json()) as { errors: Record<string, unknown>[] }
        assert.equal(body.errors[0].code, 'E_PAGINATION_INVALID_QUERY', label)
        assert.equal(body.errors[0].parameter, parameter, label)
        assert.isString(body.errors[0].message, label)
      }
    }
  })

  test('500 seeded random query strings and cursors answer 200 or a 400 body, never a 500', async ({
    assert,
  }) => {
    const url = await serve()
    const next = random(Number(process.env.FUZZ_SEED ?? 20261123))
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]

    // Real cursors to truncate, flip and forge from
    const cursors: string[] = []
    for (const sort of SORTS) {
      const response = await fetch(`${url}/cursor?sort=${sort}&paginate[first]=3`)
      assert.equal(response.status, 200)
      const page = (await response.json()) as { pageInfo: { endCursor: string } }
      cursors.push(page.pageInfo.endCursor)
    }

    const scalar = (): unknown =>
      pick<() => unknown>([
        () => Math.floor(next() * 300),
        () => -Math.floor(next() * 1e6),
        () => next() * 1e3,
        () => pick([2 ** 31, 2 ** 53 + 1, 1e300, -1e300, Number.MAX_VALUE]),
        () => pick(['abc', '', ' ', 'null', 'true', 'false', 'NaN', '-0', '0x10', '1e3']),
        () => pick(['99999999999999999999', '9223372036854775808', '-9223372036854775809']),
        () => pick(['2025-01-01', '2025-02-30', '0000-01-01', '9999-12-31T23:59:59Z', '2025-1-1']),
        () => pick(['paid', 'refunded', 'ana', '%_!', "'; drop table x; --", 'ÅÑÏ', '\u{1F600}']),
        () => '\u0000',
        () => 'x'.repeat(pick([10, 1025, 3000])),
        () => null,
        () => pick([true, false]),
        () => ({ d: pick(['garbage', '2025-01-01T00:00:00Z', '']), p: pick(['x', 1, undefined]) }),
        () => [scalar(), scalar()],
      ])()

    const cursor = (): string =>
      pick<() => string>([
        () => pick(cursors),
        () => pick(cursors).slice(0, Math.floor(next() * pick(cursors).length)),
        () => {
          const real = pick(cursors)
          const at = Math.floor(next() * real.length)
          return real.slice(0, at) + pick(['A', '_', '-', 'z', '0']) + real.slice(at + 1)
        },
        () => forge([scalar(), scalar()], pick(SORTS)),
        () => forge([scalar(), scalar(), scalar()], pick(SORTS)),
        () => forge(Array.from({ length: Math.floor(next() * 4) }, scalar), pick(SORTS)),
        () => encodeCursor([String(scalar())]),
        () => Buffer.from(JSON.stringify(scalar()) ?? 'x').toString('base64url'),
        () => Buffer.from(JSON.stringify({ v: scalar(), f: 1 })).toString('base64url'),
        () => 'x'.repeat(pick([1, 100, 2049])),
      ])()

    const encode = (value: unknown) =>
      encodeURIComponent(
        typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))
      )

    for (let index = 0; index < 500; index++) {
      const parts: string[] = []
      const count = 1 + Math.floor(next() * 4)
      for (let part = 0; part < count; part++) {
        const key = pick(KEYS)
        const value =
          key === 'paginate[after]' || key === 'paginate[before]'
            ? cursor()
            : key === 'sort'
              ? pick([...SORTS, '-nope', 'amount,,id', '', scalar()])
              : key === 'include'
                ? pick(['customer', 'customer,customer', 'secrets', '', scalar()])
                : scalar()
        parts.push(`${key}=${encode(value)}`)
      }
      const query = parts.join('&')
      const path = next() < 0.7 ? 'cursor' : 'offset'
      const response = await fetch(`${url}/${path}?${query}`)
      const label = `${dialect()} case ${index}: /${path}?${query.slice(0, 300)}`
      assert.oneOf(response.status, [200, 400], label)
      const text = await response.text()
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        assert.fail(`${label}: ${response.status} ${text.slice(0, 200)}`)
      }
      if (response.status === 400) {
        assert.equal(body.errors?.[0]?.code, 'E_PAGINATION_INVALID_QUERY', label)
        assert.isString(body.errors[0].parameter, label)
      } else {
        assert.isArray(path === 'cursor' ? body.data : body.items, label)
      }
    }
  }).timeout(120_000)
})
