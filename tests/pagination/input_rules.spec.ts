import { test } from '@japa/runner'
import { InvalidPaginationQueryException } from '../../src/pagination/errors.ts'
import {
  OPERATORS,
  parseInput,
  type ParseRules,
  type ResolvedField,
} from '../../src/pagination/input.ts'
import type { FilterOperator } from '../../src/pagination/types.ts'

/** Database-free: parseInput against hand-made rules, as a definition would resolve them */
const FIELDS: Record<string, ResolvedField> = {
  status: { field: 'status', column: 'orders.status', type: 'string', nullable: false },
  amount: { field: 'amount', column: 'orders.amount', type: 'integer', nullable: false },
  paid: { field: 'paid', column: 'orders.paid', type: 'boolean', nullable: false },
  note: { field: 'note', column: 'orders.note', type: 'string', nullable: true },
}

function rules(overrides: Partial<ParseRules> = {}): ParseRules {
  return {
    field: (name) => FIELDS[name],
    filterable: new Map<string, Set<FilterOperator>>([
      ['status', new Set(OPERATORS)],
      ['amount', new Set(['eq', 'gt', 'in', 'between'] as FilterOperator[])],
      ['paid', new Set(['eq'] as FilterOperator[])],
      ['note', new Set(['isNull', 'notNull', 'contains'] as FilterOperator[])],
    ]),
    searchable: ['status'],
    sortable: new Set(['status', 'amount', 'id']),
    includable: new Set(['customer']),
    defaultSort: [{ field: 'id', direction: 'asc' }],
    defaultPageSize: 25,
    maxPageSize: 100,
    ...overrides,
  }
}

const parse = (input: unknown, trusted = false, given = rules()) =>
  parseInput(input as Record<string, unknown>, given, trusted)

/** The 400 a request gets: its message and the parameter it names */
function refusal(input: unknown, given = rules()) {
  try {
    parse(input, false, given)
  } catch (error) {
    if (!(error instanceof InvalidPaginationQueryException)) throw error
    return { message: error.message, parameter: error.parameter, status: error.status }
  }
  throw new Error(`accepted ${JSON.stringify(input)}`)
}

test.group('Pagination input: filters', () => {
  test('every operator is known; a filter names its field, operator and coerced value', ({
    assert,
  }) => {
    const values: Record<string, unknown> = { in: 'a,b', notIn: 'a,b', between: 'a,b' }
    for (const operator of OPERATORS) {
      const value = values[operator] ?? (operator.endsWith('ull') ? 'true' : 'a')
      const { filters } = parse({ filter: { status: { [operator]: value } } })
      assert.equal(filters.length, 1, operator)
      assert.equal(filters[0].field, 'status')
      assert.equal(filters[0].operator, operator)
    }
    assert.sameMembers(
      [...OPERATORS],
      [
        ...'eq ne gt gte lt lte in notIn between'.split(' '),
        'contains',
        'startsWith',
        'isNull',
        'notNull',
      ]
    )
  })

  test('a bare value is eq, an array is in; values take the field type', ({ assert }) => {
    assert.deepEqual(parse({ filter: { amount: '50' } }).filters, [
      { field: 'amount', operator: 'eq', value: 50 },
    ])
    assert.deepEqual(parse({ filter: { amount: ['5', ' 7 '] } }).filters, [
      { field: 'amount', operator: 'in', value: [5, 7] },
    ])
    assert.deepEqual(parse({ filter: { amount: { in: ' 5 , 6' } } }).filters[0].value, [5, 6])
    // A single non-string value is a list of one; numbers are not trimmed
    assert.deepEqual(parse({ filter: { amount: { in: 5 } } }).filters[0].value, [5])
    assert.deepEqual(parse({ filter: { amount: { in: [5, 6] } } }).filters[0].value, [5, 6])
    assert.deepEqual(parse({ filter: { amount: { between: '1,9' } } }).filters[0].value, [1, 9])
    assert.deepEqual(parse({ filter: { paid: 'false' } }).filters[0].value, false)
    assert.deepEqual(parse({ filter: { status: { contains: 5 } } }).filters[0].value, '5')
    assert.deepEqual(parse({ filter: { note: { isNull: '0' } } }).filters[0].value, false)
    assert.deepEqual(parse({ filter: { note: { notNull: 'true' } } }).filters[0].value, true)
  })

  test('an empty filter value is no filter, before the operator is read', ({ assert }) => {
    for (const filter of [undefined, null, '']) assert.deepEqual(parse({ filter }).filters, [])
    for (const blank of [undefined, null, '']) {
      assert.deepEqual(parse({ filter: { status: blank } }).filters, [])
      // note allows no eq: a blank value is still no filter, never an eq refused
      assert.deepEqual(parse({ filter: { note: blank } }).filters, [])
      assert.deepEqual(parse({ filter: { amount: { gt: blank, eq: '3' } } }).filters, [
        { field: 'amount', operator: 'eq', value: 3 },
      ])
    }
  })

  test('a filter that is not filter[<field>]=<value> is refused as "filter"', ({ assert }) => {
    for (const filter of ['status', ['a'], new Date(), 5]) {
      assert.deepEqual(refusal({ filter }), {
        message: 'Invalid "filter": expected filter[<field>]=<value> parameters',
        parameter: 'filter',
        status: 400,
      })
    }
  })

  test('an undeclared field or operator is refused by name', ({ assert }) => {
    assert.deepEqual(refusal({ filter: { secret: 'x' } }), {
      message: 'Filtering by "secret" is not allowed',
      parameter: 'filter[secret]',
      status: 400,
    })
    const long = 'x'.repeat(64)
    assert.equal(refusal({ filter: { [long]: 'x' } }).parameter, `filter[${long}]`)
    assert.equal(refusal({ filter: { [`${long}y`]: 'x' } }).parameter, 'filter')
    // Names are shortened to 40 characters in messages
    assert.equal(
      refusal({ filter: { [`${'a'.repeat(40)}b`]: 'x' } }).message,
      `Filtering by "${'a'.repeat(40)}..." is not allowed`
    )
    assert.equal(
      refusal({ filter: { ['a'.repeat(40)]: 'x' } }).message,
      `Filtering by "${'a'.repeat(40)}" is not allowed`
    )
    assert.deepEqual(refusal({ filter: { status: { like: 'x' } } }), {
      message: 'Unknown filter operator "like" on "status"',
      parameter: 'filter[status][like]',
      status: 400,
    })
    assert.deepEqual(refusal({ filter: { amount: { lt: '3' } } }), {
      message: 'Operator "lt" is not allowed on filter "amount"',
      parameter: 'filter[amount][lt]',
      status: 400,
    })
    // An array is an `in`, and paid allows only eq
    assert.deepEqual(refusal({ filter: { paid: ['1'] } }), {
      message: 'Operator "in" is not allowed on filter "paid"',
      parameter: 'filter[paid]',
      status: 400,
    })
    assert.equal(refusal({ filter: { paid: 'maybe' } }).parameter, 'filter[paid]')
  })

  test('lists: at most 500 values, none empty; between takes exactly two', ({ assert }) => {
    const many = (count: number) => Array.from({ length: count }, (_, index) => String(index))
    assert.lengthOf(parse({ filter: { amount: { in: many(500) } } }).filters[0].value as [], 500)
    assert.deepEqual(refusal({ filter: { amount: { in: many(501) } } }), {
      message: 'Invalid value for filter[amount][in]: expected at most 500 values',
      parameter: 'filter[amount][in]',
      status: 400,
    })
    for (const value of ['1,,2', '1, ', [], ['1', ' ']]) {
      assert.deepEqual(refusal({ filter: { amount: { in: value } } }), {
        message: 'Invalid value for filter[amount][in]: expected a comma separated list',
        parameter: 'filter[amount][in]',
        status: 400,
      })
    }
    for (const value of ['1', '1,2,3']) {
      assert.deepEqual(refusal({ filter: { amount: { between: value } } }), {
        message: 'Invalid value for filter[amount][between]: expected two values "from,to"',
        parameter: 'filter[amount][between]',
        status: 400,
      })
    }
  })

  test('operands of the wrong shape are refused naming the parameter', ({ assert }) => {
    assert.deepEqual(refusal({ filter: { status: { eq: ['a', 'b'] } } }), {
      message: 'Invalid value for filter[status][eq]: expected a single value',
      parameter: 'filter[status][eq]',
      status: 400,
    })
    assert.equal(
      refusal({ filter: { status: { ne: { deep: 1 } } } }).message,
      'Invalid value for filter[status][ne]: expected a single value'
    )
    assert.equal(
      refusal({ filter: { status: { contains: true } } }).message,
      'Invalid value for filter[status][contains]: expected a string, received true'
    )
    assert.equal(
      refusal({ filter: { status: { startsWith: { a: 1 } } } }).message,
      'Invalid value for filter[status][startsWith]: expected a string, received {"a":1}'
    )
    assert.equal(
      refusal({ filter: { status: { contains: 'a\u0000' } } }).parameter,
      'filter[status][contains]'
    )
    assert.equal(refusal({ filter: { note: { isNull: 'yes' } } }).parameter, 'filter[note][isNull]')
    assert.equal(refusal({ filter: { amount: { in: 'a,2' } } }).parameter, 'filter[amount][in]')
    assert.equal(
      refusal({ filter: { amount: { between: '1,b' } } }).parameter,
      'filter[amount][between]'
    )
  })
})

test.group('Pagination input: search, include, sort', () => {
  test('search is trimmed, blank is none, and refused where nothing is searchable', ({
    assert,
  }) => {
    assert.equal(parse({ search: '  ana ' }).search, 'ana')
    assert.isUndefined(parse({ search: '   ' }).search)
    assert.isUndefined(parse({}).search)
    const none = rules({ searchable: [] })
    assert.isUndefined(parse({ search: '  ' }, false, none).search)
    assert.deepEqual(refusal({ search: 'ana' }, none), {
      message: 'Search is not allowed here',
      parameter: 'search',
      status: 400,
    })
    assert.deepEqual(refusal({ search: 5 }), {
      message: 'Invalid value for search: expected a string',
      parameter: 'search',
      status: 400,
    })
    assert.equal(parse({ search: 'a'.repeat(1024) }).search?.length, 1024)
    assert.deepEqual(refusal({ search: 'a'.repeat(1025) }), {
      message: 'Invalid value for search: expected a string of at most 1024 characters',
      parameter: 'search',
      status: 400,
    })
  })

  test('include lists declared relations only', ({ assert }) => {
    assert.deepEqual(parse({}).include, [])
    assert.deepEqual(parse({ include: '' }).include, [])
    assert.deepEqual(parse({ include: ' customer ' }).include, ['customer'])
    assert.deepEqual(parse({ include: ['customer', 'customer'] }).include, ['customer', 'customer'])
    assert.deepEqual(refusal({ include: 'customer,secrets' }), {
      message: 'Including "secrets" is not allowed',
      parameter: 'include',
      status: 400,
    })
    assert.deepEqual(refusal({ include: 'customer,,customer' }), {
      message: 'Invalid value for include: expected a comma separated list',
      parameter: 'include',
      status: 400,
    })
    assert.equal(refusal({ include: [5] }).message, 'Including "5" is not allowed')
    assert.equal(refusal({ include: [{ a: 1 }] }).message, 'Including "{\\"a\\":1}" is not allowed')
  })

  test('sort reads signs and lists, refuses undeclared fields, and defaults', ({ assert }) => {
    assert.deepEqual(parse({ sort: '-amount, status' }).sort, [
      { field: 'amount', direction: 'desc' },
      { field: 'status', direction: 'asc' },
    ])
    assert.deepEqual(parse({ sort: ['+status', '-id'] }).sort, [
      { field: 'status', direction: 'asc' },
      { field: 'id', direction: 'desc' },
    ])
    for (const sort of [undefined, null, '', ',']) {
      assert.deepEqual(parse({ sort }).sort, [{ field: 'id', direction: 'asc' }])
    }
    assert.deepEqual(refusal({ sort: 'amount,-secret' }), {
      message: 'Sorting by "secret" is not allowed',
      parameter: 'sort',
      status: 400,
    })
    assert.lengthOf(parse({ sort: Array.from({ length: 500 }, () => 'id') }).sort, 500)
    for (const sort of [Array.from({ length: 501 }, () => 'id'), ['id', 5], 5, { a: 'id' }]) {
      assert.deepEqual(refusal({ sort }), {
        message: 'Invalid value for sort: expected comma separated fields',
        parameter: 'sort',
        status: 400,
      })
    }
    assert.deepEqual(refusal({ sort: ['id', 'status\u0000'] }), {
      message: 'Invalid value for sort: expected a string of no NUL character',
      parameter: 'sort',
      status: 400,
    })
  })
})

test.group('Pagination input: pages', () => {
  test('defaults: page 1, the default size, no cursor', ({ assert }) => {
    for (const input of [undefined, null, {}]) {
      const parsed = parseInput(input as any, rules())
      assert.deepEqual(parsed, {
        filters: [],
        search: undefined,
        include: [],
        sort: [{ field: 'id', direction: 'asc' }],
        page: 1,
        perPage: 25,
        paginate: { first: undefined, last: undefined, after: undefined, before: undefined },
      })
    }
  })

  test('sizes are positive integers, clamped to the maximum unless trusted', ({ assert }) => {
    const input = { page: ' 3 ', perPage: 500, paginate: { first: '101', last: 100 } }
    const clamped = parse(input)
    assert.equal(clamped.page, 3)
    assert.equal(clamped.perPage, 100)
    assert.equal(clamped.paginate.first, 100)
    assert.equal(clamped.paginate.last, 100)
    const trusted = parse(input, true)
    assert.equal(trusted.perPage, 500)
    assert.equal(trusted.paginate.first, 101)
    assert.deepEqual(parse({ perPage: '1', paginate: { first: 99 } }).perPage, 1)
    assert.equal(parse({ paginate: { first: 99 } }).paginate.first, 99)
    assert.equal(parse({ page: '', perPage: null }).perPage, 25)
    // Up to 16 digits are read; 17 are refused below
    assert.equal(parse({ page: '0000000000000042' }).page, 42)
  })

  test('a size that is not a positive integer is refused, showing what was sent', ({ assert }) => {
    const cases: [unknown, string][] = [
      ['0', '"0"'],
      [0, '0'],
      [-1, '-1'],
      [1.5, '1.5'],
      ['1.5', '"1.5"'],
      ['a5', '"a5"'],
      ['5a', '"5a"'],
      // Text is shown as sent, between quotes
      ['5"', '"5""'],
      ['12345678901234567', '"12345678901234567"'],
      [true, 'true'],
      [[2], '[2]'],
      [2 ** 53, String(2 ** 53)],
    ]
    for (const [value, shown] of cases) {
      assert.deepEqual(refusal({ perPage: value }), {
        message: `Invalid value for perPage: expected a positive integer, received ${shown}`,
        parameter: 'perPage',
        status: 400,
      })
    }
    assert.equal(refusal({ page: 0 }).parameter, 'page')
    assert.equal(refusal({ paginate: { first: 0 } }).parameter, 'paginate[first]')
    assert.equal(refusal({ paginate: { last: 'x' } }).parameter, 'paginate[last]')
  })

  test('a page whose offset is no safe integer is refused as past the last page', ({ assert }) => {
    const last = Math.floor(Number.MAX_SAFE_INTEGER / 25) + 1
    assert.equal(parse({ page: last }).page, last)
    assert.deepEqual(refusal({ page: last + 1 }), {
      message: `Invalid value for page: ${last + 1} is past the last page any table has`,
      parameter: 'page',
      status: 400,
    })
  })

  test('cursors are strings, long ones read later; paginate must be an object', ({ assert }) => {
    const long = 'c'.repeat(2000)
    assert.deepEqual(parse({ paginate: { after: long, before: 'b\u0000' } }).paginate, {
      first: undefined,
      last: undefined,
      after: long,
      before: 'b\u0000',
    })
    assert.deepEqual(refusal({ paginate: { after: 5 } }), {
      message: 'Invalid value for paginate[after]: expected a string',
      parameter: 'paginate[after]',
      status: 400,
    })
    assert.equal(refusal({ paginate: { before: ['a'] } }).parameter, 'paginate[before]')
    for (const paginate of ['x', ['a'], new Date()]) {
      assert.deepEqual(refusal({ paginate }), {
        message: 'Invalid "paginate": expected paginate[first], paginate[after], ...',
        parameter: 'paginate',
        status: 400,
      })
    }
    assert.isUndefined(parse({ paginate: null }).paginate.first)
  })
})
