import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import {
  decodeCursor,
  defineFilters,
  encodeCursor,
  LucidAdapter,
  type CursorPage,
} from '../../src/pagination/main.ts'
import { readCursor } from '../../src/pagination/cursor.ts'
import {
  keysetIndex,
  keysetQueryConditions,
  tableIndexes,
} from '../../src/pagination/adapters/mysql_index_hint.ts'
import type { ResolvedKeysetColumn } from '../../src/pagination/types.ts'
import { dialect } from '../helpers.ts'
import {
  PgTestCustomer,
  PgTestOrder,
  expectedIds,
  openDatabase,
  withSeededOrders,
} from './helpers.ts'

const column = (
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

test.group('MySQL index hints', () => {
  const indexes = tableIndexes([
    { INDEX_NAME: 'PRIMARY', COLUMN_NAME: 'id', COLLATION: 'A' },
    { INDEX_NAME: 'orders_created_idx', COLUMN_NAME: 'created_at', COLLATION: 'A' },
    { INDEX_NAME: 'orders_status_amount_idx', COLUMN_NAME: 'status', COLLATION: 'A' },
    { INDEX_NAME: 'orders_status_amount_idx', COLUMN_NAME: 'amount', COLLATION: 'D' },
    { INDEX_NAME: 'orders_status_created_idx', COLUMN_NAME: 'status', COLLATION: 'A' },
    { INDEX_NAME: 'orders_status_created_idx', COLUMN_NAME: 'created_at', COLLATION: 'A' },
  ])

  test('secondary indexes end with the primary key, as InnoDB stores them', ({ assert }) => {
    const created = indexes.find(({ name }) => name === 'orders_status_created_idx')!
    assert.deepEqual(
      created.columns.map(({ name, descending }) => `${name}${descending ? ' desc' : ''}`),
      ['status', 'created_at', 'id']
    )
  })

  test('the index with the fixed columns first and the keyset after them is chosen', ({
    assert,
  }) => {
    const newest = [column('created_at', 'desc'), column('id', 'desc')]
    const fixing = (...columns: string[]) => ({ fixed: new Set(columns), others: 0 })
    assert.equal(keysetIndex(indexes, newest, fixing('status')), 'orders_status_created_idx')
    // Nothing else asked: the keyset's own index
    assert.equal(keysetIndex(indexes, newest, fixing()), 'orders_created_idx')
    // A range or a search may be served better by an index of its own
    assert.isNull(keysetIndex(indexes, newest, { fixed: new Set(), others: 1 }))
    assert.equal(
      keysetIndex(indexes, newest, { fixed: new Set(['status']), others: 1 }),
      'orders_status_created_idx'
    )
    // Every fixed column must lead the index: customer_id may be the selective one
    assert.isNull(keysetIndex(indexes, newest, fixing('status', 'customer_id')))
    // The tie of a few-valued leading column: amount DESC, id DESC read forward
    const tie = [column('status', 'asc'), column('amount', 'desc'), column('id', 'desc')]
    assert.equal(keysetIndex(indexes, tie, fixing('status')), 'orders_status_amount_idx')
    // amount ascending with id descending matches the index's amount part only
    const mixed = [column('amount', 'asc'), column('id', 'desc')]
    assert.equal(keysetIndex(indexes, mixed, fixing('status')), 'orders_status_amount_idx')
  })

  test('a keyset query fixes the columns of its AND-ed equalities and IS NULLs', async ({
    assert,
  }) => {
    const db = await openDatabase()
    try {
      // The last where clause is the keyset predicate
      const query = db
        .from('orders')
        .where('status', 'paid')
        .where('orders.customer_id', '=', 4)
        .where('amount', '>', 3)
        .whereNull('shipped_at')
        .whereRaw('id > ?', [5])
      const conditions = keysetQueryConditions(query)!
      assert.deepEqual([...conditions.fixed], ['status', 'customer_id', 'shipped_at'])
      assert.equal(conditions.others, 1)
      assert.isNull(keysetQueryConditions(db.from('orders').where('a', 1).orWhere('b', 2)))
      assert.isNull(
        keysetQueryConditions(db.from('orders').join('customers', 'customers.id', 'orders.id'))
      )
    } finally {
      await db.manager.closeAll()
    }
  })
})

test.group('Keyset segments and index hints on the database', (group) => {
  let db: Database
  withSeededOrders(group, async (opened) => {
    db = opened
    await db.rawQuery(
      'create index pg_test_orders_status_created_idx on pg_test_orders (status, created_at, id)'
    )
  })

  const definition = {
    fields: {
      createdAt: { column: 'created_at', type: 'datetime' as const },
      amount: 'number' as const,
    },
    filterable: { status: ['eq' as const] },
    sortable: ['createdAt', 'status', 'amount'],
  }
  const orders = defineFilters({ table: 'pg_test_orders' }, definition).with({
    config: {},
  })

  async function statusBoundary() {
    const expected = await expectedIds(db, [
      ['status', 'asc'],
      ['amount', 'desc'],
      ['id', 'desc'],
    ])
    const rows = await db.from('pg_test_orders').select('id', 'status')
    const statuses = new Map(rows.map((row) => [Number(row.id), row.status]))
    const end = expected.findIndex((id: number) => statuses.get(id) !== statuses.get(expected[0]))
    return { expected, end, statuses }
  }

  test('a page ending a status group says so in its end cursor; pages past and across the boundary take one statement or two per database', async ({
    assert,
  }) => {
    const { expected, end } = await statusBoundary()
    const first = await orders.findPage(db.from('pg_test_orders'), {
      sort: 'status,-amount',
      paginate: { first: end },
    })
    assert.equal(readCursor(first.endCursor)!.segmentEnd, 'after')
    // Only the cursor the walk continues from carries the hint
    assert.isUndefined(readCursor(first.startCursor)!.segmentEnd)

    const statements: string[] = []
    const next = await orders.findPage(
      db.from('pg_test_orders'),
      { sort: 'status,-amount', paginate: { first: 5, after: first.endCursor! } },
      { onQuery: (query) => statements.push(query.toSQL().sql) }
    )
    assert.deepEqual(
      next.items.map((row) => Number(row.id)),
      expected.slice(end, end + 5)
    )
    // One statement: OR-ed ranges on MariaDB, UNION ALL on PostgreSQL, a guarded read on SQLite
    assert.lengthOf(statements, 1)
    if (dialect() === 'sqlite') assert.include(statements[0], 'not exists')

    // A page spanning the boundary without the hint: one statement on MySQL/MariaDB only
    const before = await orders.findPage(db.from('pg_test_orders'), {
      sort: 'status,-amount',
      paginate: { first: end - 3 },
    })
    assert.isUndefined(readCursor(before.endCursor)!.segmentEnd)
    statements.length = 0
    const spanning = await orders.findPage(
      db.from('pg_test_orders'),
      { sort: 'status,-amount', paginate: { first: 5, after: before.endCursor! } },
      { onQuery: (query) => statements.push(query.toSQL().sql) }
    )
    assert.deepEqual(
      spanning.items.map((row) => Number(row.id)),
      expected.slice(end - 3, end + 2)
    )
    assert.lengthOf(statements, dialect() === 'mysql' ? 1 : 2)
  })

  test('a model walk with preloads crosses each status group end in one statement', async ({
    assert,
  }) => {
    const models = defineFilters(PgTestOrder, {
      fields: { amount: 'number' },
      sortable: ['status', 'amount'],
      includable: ['customer'],
    }).with({ config: {} })
    const { expected, end } = await statusBoundary()
    const first = await models.findPage(PgTestOrder, {
      sort: 'status,-amount',
      paginate: { first: end },
    })
    const statements: string[] = []
    const next = await models.findPage(
      PgTestOrder,
      {
        sort: 'status,-amount',
        include: 'customer',
        paginate: { first: 4, after: first.endCursor! },
      },
      { onQuery: (query) => statements.push(query.toSQL().sql) }
    )
    assert.lengthOf(statements, 1)
    assert.deepEqual(
      next.items.map((order) => order.id),
      expected.slice(end, end + 4)
    )
    assert.isTrue(next.items.every((order) => order.customer instanceof PgTestCustomer))
    assert.isTrue(next.items.every((order) => Object.keys(order.$extras).length === 0))
  })

  test('a row added to the tie after a segment-end cursor still comes first on the next page', async ({
    assert,
  }) => {
    const { expected, end, statuses } = await statusBoundary()
    const first = await orders.findPage(db.from('pg_test_orders'), {
      sort: 'status,-amount',
      paginate: { first: end },
    })
    assert.equal(readCursor(first.endCursor)!.segmentEnd, 'after')
    const last = first.items.at(-1)!
    // Sorts right after the cursor: same status, smaller amount
    const [inserted] = await db
      .table('pg_test_orders')
      .insert({
        customer_id: 1,
        status: statuses.get(expected[0]),
        reference: 'late',
        amount: Number(last.amount) - 1,
        paid: false,
        created_at: '2025-01-01 00:00:00',
      })
      .returning('id')
    try {
      const statements: string[] = []
      const next = await orders.findPage(
        db.from('pg_test_orders'),
        { sort: 'status,-amount', paginate: { first: 3, after: first.endCursor! } },
        { onQuery: (query) => statements.push(query.toSQL().sql) }
      )
      const insertedId = Number(typeof inserted === 'object' ? inserted.id : inserted)
      assert.deepEqual(
        next.items.map((row) => Number(row.id)),
        [insertedId, ...expected.slice(end, end + 2)]
      )
      // SQLite's guarded read finds the tie no longer empty and reads the segments one by one
      assert.lengthOf(statements, dialect() === 'sqlite' ? 3 : 1)
    } finally {
      await db.from('pg_test_orders').where('reference', 'late').delete()
    }
  })

  test('a forged segment-end hint changes how a page is read, never what it holds', async ({
    assert,
  }) => {
    const { expected } = await statusBoundary()
    const start = await orders.findPage(db.from('pg_test_orders'), {
      sort: 'status,-amount',
      paginate: { first: 4 },
    })
    const values = decodeCursor(start.endCursor)!
    const fingerprint = JSON.parse(Buffer.from(start.endCursor!, 'base64url').toString()).f
    const forged = encodeCursor(values, { fingerprint, segmentEnd: 'after' })
    const page = await orders.findPage(db.from('pg_test_orders'), {
      sort: 'status,-amount',
      paginate: { first: 6, after: forged },
    })
    assert.deepEqual(
      page.items.map((row) => Number(row.id)),
      expected.slice(4, 10)
    )
  })

  test('a filtered page names the index serving it on MySQL and MariaDB, and nowhere else', async ({
    assert,
  }) => {
    const expected = await db
      .from('pg_test_orders')
      .where('status', 'paid')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .select('id')
    const walk = async (runner: typeof orders) => {
      const seen: number[] = []
      const statements: string[] = []
      let page: CursorPage<any> | undefined
      do {
        page = await runner.findPage(
          db.from('pg_test_orders'),
          {
            sort: '-createdAt',
            filter: { status: 'paid' },
            paginate: { first: 9, after: page?.endCursor ?? undefined },
          },
          { onQuery: (query) => statements.push(query.toSQL().sql) }
        )
        seen.push(...page.items.map((row) => Number(row.id)))
      } while (page.hasNext)
      return { seen, statements }
    }
    const ids = expected.map((row) => Number(row.id))

    const hinted = await walk(orders)
    assert.deepEqual(hinted.seen, ids)
    const deep = hinted.statements.slice(1)
    if (dialect() === 'mysql') {
      assert.isTrue(
        deep.every((sql) => sql.includes('FORCE INDEX (`pg_test_orders_status_created_idx`)'))
      )
    } else {
      assert.isFalse(deep.some((sql) => /force index/i.test(sql)))
    }
    // Page 1 bounds nothing after `status = ?`: the optimizer's own `ref` is right there
    assert.notInclude(hinted.statements[0], 'FORCE INDEX')

    const unhinted = await walk(orders.with({ adapter: new LucidAdapter({ indexHints: false }) }))
    assert.deepEqual(unhinted.seen, ids)
    assert.isFalse(unhinted.statements.some((sql) => /force index/i.test(sql)))
  })

  test('a hinted index dropped since it was read is forgotten and the page still answers', async ({
    assert,
  }) => {
    const runner = orders.with({ adapter: new LucidAdapter() })
    const input = { sort: '-createdAt', filter: { status: 'paid' } }
    const first = await runner.findPage(db.from('pg_test_orders'), {
      ...input,
      paginate: { first: 5 },
    })
    const statements: string[] = []
    const page = () =>
      runner.findPage(
        db.from('pg_test_orders'),
        { ...input, paginate: { first: 5, after: first.endCursor! } },
        { onQuery: (query) => statements.push(query.toSQL().sql) }
      )
    const before = await page()
    await db.rawQuery(
      dialect() === 'mysql'
        ? 'drop index pg_test_orders_status_created_idx on pg_test_orders'
        : 'drop index pg_test_orders_status_created_idx'
    )
    try {
      const after = await page()
      assert.deepEqual(after.items, before.items)
      // Read again: the next page names no index the table lacks
      await page()
      assert.notInclude(statements.at(-1)!, 'FORCE INDEX')
    } finally {
      await db.rawQuery(
        'create index pg_test_orders_status_created_idx on pg_test_orders (status, created_at, id)'
      )
    }
  })
})
