import { readdir, readFile } from 'node:fs/promises'
import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import {
  defineFilters,
  errors,
  LucidAdapter,
  type QueryBuilderLike,
  type ResolvedKeysetColumn,
} from '../../src/pagination/main.ts'
import { PgTestOrder, withSeededOrders } from './helpers.ts'

/**
 * A recording double of the query builder seam: each call is written down,
 * nothing runs. What the runner and the adapter ask of a query is all here.
 */
class RecordingQuery implements QueryBuilderLike<{ id: number }> {
  calls: [string, ...unknown[]][] = []
  readonly client = {
    dialect: { name: 'postgres' },
    connectionName: 'recording',
    knexRawQuery: (sql: string, bindings?: unknown) => ({ sql, bindings }),
    rawQuery: async () => [],
  }
  readonly knexQuery = { from: () => undefined, select: () => undefined }
  readonly model = { table: 'pg_test_orders', primaryKey: 'id' }

  #record(method: string, args: unknown[]) {
    this.calls.push([method, ...args])
    return this
  }
  where(...args: unknown[]) {
    const [first] = args
    if (typeof first === 'function') {
      const group = new RecordingQuery()
      first(group)
      return this.#record('where', [group.calls])
    }
    return this.#record('where', args)
  }
  whereNot(...args: unknown[]) {
    return this.#record('whereNot', args)
  }
  whereIn(...args: unknown[]) {
    return this.#record('whereIn', args)
  }
  whereNotIn(...args: unknown[]) {
    return this.#record('whereNotIn', args)
  }
  whereBetween(...args: unknown[]) {
    return this.#record('whereBetween', args)
  }
  whereNull(...args: unknown[]) {
    return this.#record('whereNull', args)
  }
  whereNotNull(...args: unknown[]) {
    return this.#record('whereNotNull', args)
  }
  whereRaw(...args: unknown[]) {
    return this.#record('whereRaw', args)
  }
  orWhereRaw(...args: unknown[]) {
    return this.#record('orWhereRaw', args)
  }
  whereNotExists(...args: unknown[]) {
    return this.#record('whereNotExists', args)
  }
  orderBy(...args: unknown[]) {
    return this.#record('orderBy', args)
  }
  orderByRaw(...args: unknown[]) {
    return this.#record('orderByRaw', args)
  }
  select(...args: unknown[]) {
    return this.#record('select', args)
  }
  limit(...args: unknown[]) {
    return this.#record('limit', args)
  }
  clearSelect() {
    return this.#record('clearSelect', [])
  }
  clearWhere() {
    return this.#record('clearWhere', [])
  }
  clearOrder() {
    return this.#record('clearOrder', [])
  }
  clearLimit() {
    return this.#record('clearLimit', [])
  }
  clearOffset() {
    return this.#record('clearOffset', [])
  }
  clone() {
    const copy = new RecordingQuery()
    copy.calls = [...this.calls]
    return copy
  }
  toQuery() {
    return JSON.stringify(this.calls)
  }
  toSQL() {
    return { sql: this.toQuery(), bindings: [] }
  }
  then<Result = { id: number }[], Rejected = never>(
    resolve?: ((rows: { id: number }[]) => Result | PromiseLike<Result>) | null,
    reject?: ((reason: unknown) => Rejected | PromiseLike<Rejected>) | null
  ): PromiseLike<Result | Rejected> {
    return Promise.resolve([] as { id: number }[]).then(resolve, reject)
  }
}

test.group('Pagination seams', (group) => {
  let db: Database
  withSeededOrders(group, (opened) => {
    db = opened
  })

  test('Lucid model and plain queries are QueryBuilderLike', async ({ assert }) => {
    // Compiles only while Lucid's builders satisfy the seam
    const modelQuery: QueryBuilderLike = PgTestOrder.query()
    const plainQuery: QueryBuilderLike = db.from('pg_test_orders')
    assert.equal(modelQuery.client.dialect.name, plainQuery.client.dialect.name)
    // findPage is typed by what it is given: model instances, or a query's rows
    const page = await defineFilters(PgTestOrder, {})
      .with({ config: {} })
      .findPage(PgTestOrder, { paginate: { first: 2 } })
    const first: PgTestOrder = page.items[0]
    assert.instanceOf(first, PgTestOrder)
  })

  test('Knex and Lucid internals are read in mysql_index_hint.ts only', async ({ assert }) => {
    const root = new URL('../../src/pagination/', import.meta.url)
    const files = await readdir(root, { recursive: true })
    const readers = []
    for (const file of files.filter((name) => name.endsWith('.ts'))) {
      const source = await readFile(new URL(file, root), 'utf8')
      if (/\b(_statements|_single|whereStack)\b/.test(source)) readers.push(file)
    }
    assert.deepEqual(readers, ['adapters/mysql_index_hint.ts'])
  })

  test('the runner asks the query builder only what the seam declares', ({ assert }) => {
    const runner = defineFilters(PgTestOrder, {
      fields: { amount: 'integer', shippedAt: { type: 'datetime', nullable: true } },
      filterable: { status: ['eq', 'in'], amount: ['gte'], shippedAt: ['isNull'] },
      searchable: ['reference'],
      sortable: ['amount', 'shippedAt'],
    }).with({ config: {} })
    const query = runner.apply(new RecordingQuery(), {
      filter: { status: 'paid', amount: { gte: '100' }, shippedAt: { isNull: 'false' } },
      search: 'Ana',
      sort: '-shippedAt,amount',
    })
    assert.deepEqual(query.calls, [
      ['where', 'pg_test_orders.status', 'paid'],
      ['where', 'pg_test_orders.amount', '>=', 100],
      ['whereNotNull', 'pg_test_orders.shipped_at'],
      [
        'where',
        [
          [
            'orWhereRaw',
            `CAST(?? AS text) ILIKE ? ESCAPE '!'`,
            ['pg_test_orders.reference', '%ana%'],
          ],
        ],
      ],
      ['orderByRaw', '?? desc nulls last', ['pg_test_orders.shipped_at']],
      ['orderBy', 'pg_test_orders.amount', 'asc'],
      ['orderBy', 'pg_test_orders.id', 'asc'],
    ])
  })

  test('the Lucid adapter writes a keyset page through the seam', ({ assert }) => {
    const keyset: ResolvedKeysetColumn[] = [
      { field: 'amount', column: 'pg_test_orders.amount', direction: 'desc', nullable: false },
      { field: 'id', column: 'pg_test_orders.id', direction: 'desc', nullable: false },
    ]
    const adapter = new LucidAdapter()
    const query = new RecordingQuery()
    adapter.applyKeysetPagination(query, keyset, { kind: 'after', values: [50, 7] })
    adapter.applyKeysetOrderAndLimit(query, keyset, 26)
    assert.deepEqual(query.calls, [
      ['whereRaw', '(??, ??) < (?, ?)', ['pg_test_orders.amount', 'pg_test_orders.id', 50, 7]],
      ['clearOrder'],
      ['orderBy', 'pg_test_orders.amount', 'desc'],
      ['orderBy', 'pg_test_orders.id', 'desc'],
      ['limit', 26],
    ])
    assert.equal(adapter.getPrimaryKey(query), 'id')
  })

  test('a NULL in a sort column not declared nullable fails the page, naming the fix', async ({
    assert,
  }) => {
    // shippedAt holds NULLs; undeclared, a walk would never reach them past page 1
    const runner = defineFilters(PgTestOrder, {
      fields: { shippedAt: 'datetime' },
      sortable: ['shippedAt'],
    }).with({ config: {} })
    for (const sort of ['shippedAt', '-shippedAt']) {
      let after: string | undefined
      let error: unknown = null
      for (let page = 0; page < 20 && error === null; page++) {
        try {
          const result = await runner.findPage(PgTestOrder, {
            sort,
            paginate: { first: 50, after },
          })
          if (!result.hasNext) break
          after = result.nextCursor!
        } catch (caught) {
          error = caught
        }
      }
      assert.instanceOf(error, errors.PaginationConfigException, sort)
      assert.match(
        (error as Error).message,
        /"shippedAt" holds NULL but is not declared nullable.*fields: \{ shippedAt: \{ nullable: true \} \}/
      )
    }
  })
})
