import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { DateTime } from 'luxon'
import {
  buildKeyset,
  defineFilters,
  encodeCursor,
  errors,
  type FilterRunner,
  type KeysetAdapter,
  LucidAdapter,
  type CursorPage,
} from '../../src/pagination/main.ts'
import { keysetFingerprint, readCursor } from '../../src/pagination/cursor.ts'
import { memoryDatabase } from './memory_database.ts'

/**
 * Database-free: whole keyset pages through the runner and the Lucid adapter
 * on an in-memory SQLite: walks, their boundaries, cursors refused by name.
 */
class Item extends BaseModel {
  static table = 'items'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare status: string

  @column()
  declare amount: number

  @column({ columnName: 'note_text' })
  declare note: string | null

  @column.dateTime()
  declare shippedAt: DateTime | null

  @column.dateTime()
  declare createdAt: DateTime
}

const STATUSES = ['paid', 'pending', 'failed']

async function seed(db: Database) {
  await db.connection().schema.createTable('items', (table) => {
    table.increments('id')
    table.string('status').notNullable()
    table.integer('amount').notNullable()
    table.string('note_text').nullable()
    table.datetime('shipped_at').nullable()
    table.datetime('created_at').notNullable()
  })
  const rows = Array.from({ length: 23 }, (_, index) => ({
    status: STATUSES[(index * 7) % 3],
    amount: ((index * 5) % 4) * 10,
    note_text: index % 4 === 0 ? null : `note ${index % 5}`,
    shipped_at: index % 3 === 1 ? null : `2025-01-0${1 + (index % 4)} 10:00:00.${index % 2}00`,
    // Three values a microsecond apart: equal as milliseconds, different as the database's text
    created_at: `2025-02-01 00:00:00.000${index % 3}00`,
  }))
  await db.table('items').multiInsert(rows)
}

const config = { defaultPageSize: 4, maxPageSize: 10 }

const items = defineFilters(Item, {
  filterable: { status: ['eq'], amount: ['gte'] },
  sortable: ['status', 'amount', 'shippedAt', 'createdAt', 'note'],
  fields: { shippedAt: { nullable: true }, amount: 'integer', createdAt: { distinct: 'few' } },
}).with({ config })

const ids = (page: CursorPage<unknown>) => page.items.map((row: any) => Number(row.id))

test.group('Keyset pages on SQLite', (group) => {
  let db: Database
  group.setup(async () => {
    db = memoryDatabase()
    Item.useAdapter(db.modelAdapter())
    await seed(db)
    return () => db.manager.closeAll()
  })

  /** The ids in a plain ORDER BY (SQLite sorts NULLs smallest, as pages do) */
  async function expected(order: string, where = '') {
    const rows = await db.rawQuery(`select id from items ${where} order by ${order}`)
    return rows.map((row: { id: number }) => row.id)
  }

  async function walk(runner: FilterRunner<any>, entity: () => any, input: any, size: number) {
    const forward: number[] = []
    let after: string | undefined
    let previous: CursorPage<unknown> | undefined
    for (let guard = 0; guard < 30; guard++) {
      const page = await runner.findPage(entity(), {
        ...input,
        paginate: { first: size, after },
      })
      forward.push(...ids(page))
      if (previous === undefined) check(!page.hasPrev && page.prevCursor === null)
      else check(page.hasPrev && page.prevCursor === page.startCursor)
      check(page.items.length <= size)
      // The helper columns holding the database's date text never reach the caller
      for (const row of page.items as any[]) {
        const keys = [...Object.keys(row), ...Object.keys(row.$extras ?? {})]
        check(!keys.some((key) => key.startsWith('__atrium')))
      }
      if (!page.hasNext) {
        check(page.nextCursor === null)
        break
      }
      check(page.items.length === size && page.nextCursor === page.endCursor)
      after = page.nextCursor!
      previous = page
    }
    const backward: number[] = []
    let before: string | undefined
    let page = await runner.findPage(entity(), { ...input, paginate: { last: size } })
    for (let guard = 0; guard < 30; guard++) {
      backward.unshift(...ids(page))
      if (!page.hasPrev) break
      before = page.prevCursor!
      page = await runner.findPage(entity(), { ...input, paginate: { last: size, before } })
    }
    return { forward, backward }
  }

  function check(condition: boolean): asserts condition {
    if (!condition) throw new Error('page boundary flags or cursors are wrong')
  }

  const SORTS: [string, string][] = [
    ['-amount', 'amount desc, id desc'],
    ['status,-amount', 'status asc, amount desc, id desc'],
    ['-shippedAt', 'shipped_at desc, id desc'],
    ['shippedAt,status', 'shipped_at asc, status asc, id asc'],
    ['createdAt', 'created_at asc, id asc'],
    ['-createdAt,-amount', 'created_at desc, amount desc, id desc'],
  ]
  for (const [sort, order] of SORTS) {
    test(`a walk sorted by "${sort}" visits every row once, forward and backward`, async (ctx) => {
      const all = await expected(order)
      for (const size of [2, 5]) {
        const model = await walk(items, () => Item.query(), { sort }, size)
        ctx.assert.deepEqual(model.forward, all, `forward, pages of ${size}`)
        ctx.assert.deepEqual(model.backward, all, `backward, pages of ${size}`)
      }
      const table = defineFilters(
        { table: 'items' },
        {
          ...items.definition,
          fields: {
            amount: 'integer',
            shippedAt: { column: 'shipped_at', type: 'datetime', nullable: true },
            createdAt: { column: 'created_at', type: 'datetime', distinct: 'few' },
          },
        }
      ).with({ config })
      const plain = await walk(table, () => db.from('items'), { sort }, 4)
      ctx.assert.deepEqual(plain.forward, all)
      ctx.assert.deepEqual(plain.backward, all)
    })
  }

  test('an adapter without combined reads walks segment by segment, each only while the page is short', async ({
    assert,
  }) => {
    const lucid = new LucidAdapter()
    let statements = 0
    const separate: KeysetAdapter = {
      getResult: (query) => {
        statements++
        return lucid.getResult(query)
      },
      getPrimaryKey: (query) => lucid.getPrimaryKey(query),
      applyKeysetPagination: (query, keyset, segment) =>
        lucid.applyKeysetPagination(query, keyset, segment),
      applyKeysetOrderAndLimit: (query, keyset, limit, segment) =>
        lucid.applyKeysetOrderAndLimit(query, keyset, limit, segment),
    }
    const runner = items.with({ adapter: separate })
    for (const [sort, order] of SORTS) {
      const { forward, backward } = await walk(runner, () => Item.query(), { sort }, 4)
      assert.deepEqual(forward, await expected(order), sort)
      assert.deepEqual(backward, await expected(order), sort)
    }
    // The tie fills the page: the segment beyond it is never read
    const all = await expected('status asc, amount desc, id desc')
    const first = await runner.findPage(Item, { sort: 'status,-amount', paginate: { first: 1 } })
    statements = 0
    const next = await runner.findPage(Item, {
      sort: 'status,-amount',
      paginate: { first: 1, after: first.endCursor! },
    })
    assert.deepEqual(ids(next), all.slice(1, 2))
    assert.equal(statements, 1)
  })

  test('read segment by segment, each segment asks only for the rows the page still lacks', async ({
    assert,
  }) => {
    const { adapter, statements } = recordingAdapter({ combine: false })
    const runner = items.with({ adapter })
    const rows = await db.from('items').select('status')
    const lead = rows.filter((row: any) => row.status === 'failed').length
    const first = await runner.findPage(Item, { sort: 'status,-amount', paginate: { first: 1 } })
    statements.length = 0
    await runner.findPage(
      Item,
      { sort: 'status,-amount', paginate: { first: 10, after: first.endCursor! } },
      { trustedPageSize: true }
    )
    // 11 rows asked (the page and one to see past it): the rest of the tie, then what it lacks
    const [tie, beyond] = statements
    assert.match(tie, /limit 11$/)
    assert.match(beyond, new RegExp(`limit ${11 - (lead - 1)}$`))
  })

  test('a lead with many values and no NULLs never ends a group', async ({ assert }) => {
    for (let size = 1; size <= 10; size++) {
      const page = await items.findPage(Item, { sort: '-amount', paginate: { first: size } })
      assert.isUndefined(readCursor(page.endCursor)?.segmentEnd)
    }
  })

  test('a filtered walk keeps the filter on every page', async ({ assert }) => {
    const all = await expected('amount desc, id desc', 'where amount >= 20')
    const { forward, backward } = await walk(
      items,
      () => Item,
      { sort: '-amount', filter: { amount: { gte: '20' } } },
      3
    )
    assert.deepEqual(forward, all)
    assert.deepEqual(backward, all)
  })

  test('page sizes: first, then last, then the default; after wins over before', async ({
    assert,
  }) => {
    const all = await expected('id asc')
    const byDefault = await items.findPage(Item, {})
    assert.lengthOf(byDefault.items, 4)
    const two = await items.findPage(Item, { paginate: { first: 2 } })
    assert.lengthOf(two.items, 2)
    const page = await items.findPage(Item, { paginate: { first: 3 } })
    const both = await items.findPage(Item, {
      paginate: { first: 2, after: page.endCursor!, before: page.startCursor!, last: 5 },
    })
    assert.deepEqual(ids(both), all.slice(3, 5))
    assert.isTrue(both.hasPrev)
    const tail = await items.findPage(Item, { paginate: { last: 2, first: 6 } })
    assert.deepEqual(ids(tail), all.slice(-2))
    assert.isTrue(tail.hasPrev)
    assert.isFalse(tail.hasNext)
    const lastDefault = await items.findPage(Item, { paginate: { before: page.endCursor! } })
    assert.deepEqual(ids(lastDefault), all.slice(0, 2))
    assert.isTrue(lastDefault.hasNext)
    assert.isFalse(lastDefault.hasPrev)
  })

  test('an unreadable cursor, or one of another length, reads the first page', async ({
    assert,
  }) => {
    const first = ids(await items.findPage(Item, { sort: '-amount' }))
    const fingerprint = keysetFingerprint(buildKeyset('-amount', 'id'))
    for (const cursor of ['junk', encodeCursor([10], { fingerprint })]) {
      for (const paginate of [{ after: cursor }, { before: cursor }]) {
        const page = await items.findPage(Item, { sort: '-amount', paginate })
        assert.deepEqual(ids(page), first)
        assert.isFalse(page.hasPrev)
      }
    }
  })

  test('a cursor of another sort or with values that do not fit is a 400 naming it', async ({
    assert,
  }) => {
    const page = await items.findPage(Item, { sort: '-amount' })
    const refused = async (input: any) => {
      try {
        await items.findPage(Item, input)
      } catch (error) {
        if (!(error instanceof errors.E_PAGINATION_INVALID_QUERY)) throw error
        return [error.message, error.parameter]
      }
      return null
    }
    assert.deepEqual(await refused({ sort: 'amount', paginate: { before: page.endCursor } }), [
      'Invalid value for paginate[before]: the cursor was made under another sort. Send the sort of the walk, or start again without a cursor',
      'paginate[before]',
    ])
    const otherSort = await refused({ sort: 'status', paginate: { after: page.endCursor } })
    assert.equal(otherSort?.[1], 'paginate[after]')
    const fingerprint = keysetFingerprint(buildKeyset('-shippedAt,-amount', 'id'))
    const forged = (values: unknown[]) => ({
      sort: '-shippedAt,-amount',
      paginate: { after: encodeCursor(values, { fingerprint }) },
    })
    assert.deepEqual(await refused(forged([null, 'ten', 3])), [
      'Invalid value for paginate[after]: its "amount" is not an integer',
      'paginate[after]',
    ])
    assert.deepEqual(await refused(forged([null, null, 3])), [
      'Invalid value for paginate[after]: its "amount" is not nullable',
      'paginate[after]',
    ])
    const notDate = await refused(forged(['not a date', 10, 3]))
    assert.equal(
      notDate?.[0],
      'Invalid value for paginate[after]: its "shippedAt" is not an ISO 8601 date'
    )
    // A NULL where the column is nullable is a position in its NULL block
    assert.isNull(await refused(forged([null, 10, 3])))
  })

  test('a NULL in a sort column not declared nullable fails the page, naming the fix', async ({
    assert,
  }) => {
    const message =
      'The sort column "note" holds NULL but is not declared nullable, so a cursor walk would skip its NULL rows. Declare it in defineFilters: fields: { note: { nullable: true } }'
    const failure = (page: Promise<unknown>) =>
      page.then(
        () => null,
        (error) => (error instanceof errors.E_PAGINATION_CONFIG ? error.message : error)
      )
    // Ascending, the NULL rows come first and reach the page
    assert.equal(await failure(items.findPage(Item, { sort: 'note' })), message)
    // Descending, the walk's predicates pass them by: the end of the walk looks for them
    const first = await items.findPage(Item, { sort: '-note', paginate: { first: 6 } })
    assert.isTrue(first.hasNext)
    const rest = items.findPage(
      Item,
      { sort: '-note', paginate: { first: 30, after: first.endCursor! } },
      { trustedPageSize: true }
    )
    assert.equal(await failure(rest), message)
    const declared = items.with({ definition: { fields: { note: { nullable: true } } } })
    const page = await declared.findPage(Item, { sort: 'note' }, { trustedPageSize: true })
    assert.lengthOf(page.items, 4)
  })

  test('a page ending at a group end says so in its end cursor, forward and backward', async ({
    assert,
  }) => {
    const all = await expected('status asc, amount desc, id desc')
    const rows = await db.from('items').select('id', 'status')
    const statuses = new Map(rows.map((row: any) => [row.id, row.status]))
    for (let size = 1; size < all.length; size++) {
      const page = await items.findPage(
        Item,
        { sort: 'status,-amount', paginate: { first: size } },
        { trustedPageSize: true }
      )
      const ends = statuses.get(all[size - 1]) !== statuses.get(all[size])
      assert.equal(readCursor(page.endCursor)?.segmentEnd, ends ? 'after' : undefined, `${size}`)
      assert.isUndefined(readCursor(page.startCursor)?.segmentEnd)
      const back = await items.findPage(
        Item,
        { sort: 'status,-amount', paginate: { last: size } },
        { trustedPageSize: true }
      )
      const starts = statuses.get(all.at(-size)!) !== statuses.get(all.at(-size - 1)!)
      assert.equal(readCursor(back.startCursor)?.segmentEnd, starts ? 'before' : undefined)
    }
  })

  test('a few-valued timestamp lead ends its group where the database text changes', async ({
    assert,
  }) => {
    const rows = await db
      .from('items')
      .select('id', 'created_at')
      .orderBy([
        { column: 'created_at', order: 'asc' },
        { column: 'id', order: 'asc' },
      ])
    for (let size = 1; size < rows.length; size++) {
      const page = await items.findPage(
        Item,
        { sort: 'createdAt', paginate: { first: size } },
        { trustedPageSize: true }
      )
      const ends = rows[size - 1].created_at !== rows[size].created_at
      assert.equal(readCursor(page.endCursor)?.segmentEnd, ends ? 'after' : undefined, `${size}`)
    }
  })

  test('a nullable lead with many values: only the last value before the NULL block ends a group', async ({
    assert,
  }) => {
    const all = await expected('shipped_at desc, id desc')
    const nullRows = await db.from('items').whereNull('shipped_at').select('id')
    const nulls = new Set(nullRows.map((row: any) => row.id))
    const firstNull = all.findIndex((id: number) => nulls.has(id))
    for (let size = 1; size < all.length; size++) {
      const page = await items.findPage(
        Item,
        { sort: '-shippedAt', paginate: { first: size } },
        { trustedPageSize: true }
      )
      // A change of value inside the non-NULL rows is no group end: the lead has many values
      assert.equal(
        readCursor(page.endCursor)?.segmentEnd,
        size === firstNull ? 'after' : undefined,
        `${size}`
      )
    }
  })

  /** The Lucid adapter, recording the SQL of every statement it runs */
  function recordingAdapter(options: { combine: boolean }) {
    const lucid = new LucidAdapter()
    const statements: string[] = []
    const adapter: KeysetAdapter = {
      getResult: (query) => {
        statements.push((query as any).toQuery())
        return lucid.getResult(query)
      },
      getPrimaryKey: (query) => lucid.getPrimaryKey(query),
      applyKeysetPagination: (query, keyset, segment) =>
        lucid.applyKeysetPagination(query, keyset, segment),
      applyKeysetOrderAndLimit: (query, keyset, limit, segment) =>
        lucid.applyKeysetOrderAndLimit(query, keyset, limit, segment),
    }
    if (options.combine) {
      adapter.combineKeysetSegments = (query, keyset, segments, limit, context) =>
        lucid.combineKeysetSegments(query as any, keyset, segments, limit, context)
    }
    return { adapter, statements }
  }

  test('a page that holds the last rows exactly has no next page and runs one statement', async ({
    assert,
  }) => {
    const { adapter, statements } = recordingAdapter({ combine: true })
    const runner = items.with({ adapter })
    const [{ total }] = await db.from('items').where('status', 'paid').count('* as total')
    const page = await runner.findPage(Item, {
      sort: '-amount',
      filter: { status: 'paid' },
      paginate: { first: Number(total) },
    })
    assert.lengthOf(page.items, Number(total))
    assert.isFalse(page.hasNext)
    assert.isNull(page.nextCursor)
    // Page 1 of a walk never probes for NULLs: its rows are checked as they are read
    assert.lengthOf(statements, 1)
  })

  test('a walk ends with one probe for NULLs, in the sort columns not declared nullable only', async ({
    assert,
  }) => {
    const { adapter, statements } = recordingAdapter({ combine: true })
    const runner = items.with({ adapter })
    const lastPage = async (sort: string) => {
      let page = await runner.findPage(Item, { sort, paginate: { first: 10 } })
      while (page.hasNext) {
        statements.length = 0
        page = await runner.findPage(Item, {
          sort,
          paginate: { first: 10, after: page.endCursor! },
        })
      }
      return [...statements]
    }

    const walked = await lastPage('status,-amount')
    const lastStatements = walked.map((sql) => sql.replace(/[`"]/g, ''))
    const probe = lastStatements.pop()!
    for (const read of lastStatements) assert.notInclude(read, 'IS NULL')
    assert.include(probe, 'items.status IS NULL or items.amount IS NULL')
    // Never the primary key, never a nullable column: their NULLs are not a misconfiguration
    assert.notInclude(probe, 'items.id IS NULL')
    assert.notInclude(probe, 'shipped_at IS NULL')

    // Sorted by a nullable column and the key only: there is nothing to probe
    assert.lengthOf(await lastPage('-shippedAt'), 1)
  })

  test('withTotal counts the filtered rows, not the page', async ({ assert }) => {
    const [{ total }] = await db.from('items').where('status', 'paid').count('* as total')
    const page = await items.findPage(
      Item,
      { filter: { status: 'paid' }, paginate: { first: 2 } },
      { withTotal: true }
    )
    assert.equal(page.total, Number(total))
    const table = defineFilters({ table: 'items' }, items.definition).with({ config })
    const plain = await table.findPage(
      db.from('items'),
      { filter: { status: 'paid' }, paginate: { first: 2 } },
      { withTotal: true }
    )
    assert.equal(plain.total, Number(total))
    assert.notProperty(await items.findPage(Item, {}), 'total')
  })
})
