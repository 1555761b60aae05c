import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { DateTime } from 'luxon'
import { defineFilters, errors } from '../../src/pagination/main.ts'
import { memoryDatabase } from './memory_database.ts'

/**
 * Database-free: what a runner reads from its definition and model (columns,
 * types, page sizes), its adapter check, and its offset pages on an
 * in-memory SQLite.
 */
class Ticket extends BaseModel {
  static table = 'tickets'

  @column({ isPrimary: true })
  declare id: number

  @column({ columnName: 'title_text' })
  declare title: string

  @column()
  declare points: number

  @column.date()
  declare dueOn: DateTime

  @column.dateTime()
  declare closedAt: DateTime | null
}

class Code extends BaseModel {
  static table = 'codes'
  static selfAssignPrimaryKey = true

  @column({ isPrimary: true })
  declare code: string
}

const config = { defaultPageSize: 3, maxPageSize: 50 }

test.group('Filter runner: fields and rules', () => {
  test('a field takes its column, type and nullability from the definition and the model', ({
    assert,
  }) => {
    const runner = defineFilters(Ticket, {
      fields: {
        points: 'number',
        closedAt: { nullable: true },
        title: { distinct: 'many' },
        other: { column: 'elsewhere.other' },
        renamed: { column: 'x_col', type: 'boolean' },
        dueOn: { type: 'string' },
      },
    }).with({ config })
    const field = (name: string) => {
      const { column: qualified, type, nullable, few } = runner.field(name)
      return { column: qualified, type, nullable, few }
    }
    assert.deepEqual(field('title'), {
      column: 'tickets.title_text',
      type: 'string',
      nullable: false,
      few: false,
    })
    assert.deepEqual(field('points'), {
      column: 'tickets.points',
      type: 'number',
      nullable: false,
      few: false,
    })
    assert.deepEqual(field('closedAt'), {
      column: 'tickets.closed_at',
      type: 'datetime',
      nullable: true,
      few: false,
    })
    // A declared type wins over the model's
    assert.equal(field('dueOn').type, 'string')
    assert.deepEqual(field('other'), {
      column: 'elsewhere.other',
      type: 'string',
      nullable: false,
      few: true,
    })
    assert.deepEqual(field('renamed'), {
      column: 'tickets.x_col',
      type: 'boolean',
      nullable: false,
      few: true,
    })
    assert.deepEqual(field('id'), {
      column: 'tickets.id',
      type: 'integer',
      nullable: false,
      few: false,
    })
    assert.strictEqual(runner.field('title'), runner.field('title'))
    assert.equal(defineFilters(Ticket, {}).field('dueOn').type, 'date')
    assert.equal(defineFilters(Code, {}).field('code').type, 'string')
  })

  test('a plain table qualifies its columns; its primary key is an integer', ({ assert }) => {
    const table = defineFilters({ table: 'logs', primaryKey: 'log_id' }, { primaryKey: 'other' })
    assert.deepEqual(
      { ...table.field('log_id') },
      {
        field: 'log_id',
        column: 'logs.log_id',
        type: 'integer',
        nullable: false,
        few: false,
      }
    )
    assert.equal(
      defineFilters({ table: 'logs' }, { primaryKey: 'uid' }).field('uid').type,
      'integer'
    )
    assert.equal(defineFilters({ table: 'logs' }, {}).field('id').type, 'integer')
    assert.equal(defineFilters({ table: 'logs' }, {}).field('uid').type, 'string')
  })

  test('page sizes: the definition caps the config; the default never passes the cap', ({
    assert,
  }) => {
    const runner = defineFilters({ table: 'logs' }, { maxPageSize: 2 }).with({ config })
    assert.equal(runner.parse({}).perPage, 2)
    assert.equal(runner.parse({ perPage: 9 }).perPage, 2)
    assert.equal(runner.parse({ perPage: 9 }, { trustedPageSize: true }).perPage, 9)
    const loose = defineFilters({ table: 'logs' }, {}).with({ config })
    assert.equal(loose.parse({}).perPage, 3)
    assert.equal(loose.parse({ perPage: 60 }).perPage, 50)
    // Parse rules follow the runner's own definition
    const sorted = loose.with({ definition: { sortable: ['id'], defaultSort: '-id' } })
    assert.deepEqual(sorted.parse({}).sort, [{ field: 'id', direction: 'desc' }])
    assert.deepEqual(sorted.parse({ sort: 'id' }).sort, [{ field: 'id', direction: 'asc' }])
    assert.throws(() => loose.parse({ sort: 'id' }), 'Sorting by "id" is not allowed')
  })

  test('findPage refuses an adapter without the four keyset methods, naming them', async ({
    assert,
  }) => {
    const runner = defineFilters({ table: 'logs' }, {}).with({ config })
    const method = () => {}
    const partial = {
      getResult: method,
      getPrimaryKey: method,
      applyKeysetPagination: method,
    }
    for (const adapter of [partial, 'lucid', { ...partial, applyKeysetOrderAndLimit: 1 }]) {
      try {
        await runner.with({ adapter: adapter as any }).findPage({} as any)
        assert.fail('accepted')
      } catch (error) {
        assert.instanceOf(error, errors.E_PAGINATION_ADAPTER)
        assert.equal(
          (error as Error).message,
          'findPage requires an adapter implementing getResult, getPrimaryKey, applyKeysetPagination and applyKeysetOrderAndLimit'
        )
      }
    }
  })
})

test.group('Filter runner: queries on SQLite', (group) => {
  let db: Database
  group.setup(async () => {
    db = memoryDatabase()
    Ticket.useAdapter(db.modelAdapter())
    await db.connection().schema.createTable('tickets', (table) => {
      table.increments('id')
      table.string('title_text').notNullable()
      table.integer('points').notNullable()
      table.date('due_on').notNullable()
      table.datetime('closed_at').nullable()
    })
    await db.table('tickets').multiInsert(
      Array.from({ length: 8 }, (_, index) => ({
        title_text: `ticket ${index}`,
        points: index % 3,
        due_on: '2025-03-01',
        closed_at: null,
      }))
    )
    return () => db.manager.closeAll()
  })

  const tickets = defineFilters(Ticket, {
    filterable: { points: ['eq', 'gte'] },
    sortable: ['points', 'title'],
    fields: { points: 'integer' },
  }).with({ config })

  const idsOf = (rows: any[]) => rows.map((row) => Number(row.id))

  test('apply filters and sorts a query; applyDynamic widens the definition for one call', async ({
    assert,
  }) => {
    const rows = await tickets.apply(db.from('tickets'), {
      filter: { points: { gte: '1' } },
      sort: '-points',
    })
    assert.deepEqual(idsOf(rows), [6, 3, 8, 5, 2])
    assert.deepEqual(idsOf(await tickets.apply(Ticket.query())), [1, 2, 3, 4, 5, 6, 7, 8])
    const dynamic = await tickets.applyDynamic(
      Ticket.query(),
      { filter: { title: 'ticket 3' } },
      { filterable: { title: ['eq'] } }
    )
    assert.deepEqual(idsOf(dynamic), [4])
    assert.throws(
      () => tickets.apply(Ticket.query(), { filter: { title: 'ticket 3' } }),
      'Filtering by "title" is not allowed'
    )
  })

  test('findAndCount: the page, the total and the last page', async ({ assert }) => {
    const page = await tickets.findAndCount(Ticket, { page: 2, sort: 'points' })
    assert.deepEqual(idsOf(page.items), [2, 5, 8])
    assert.deepEqual(
      { total: page.total, page: page.page, perPage: page.perPage, lastPage: page.lastPage },
      { total: 8, page: 2, perPage: 3, lastPage: 3 }
    )
    const none = await tickets.findAndCount(db.from('tickets'), { filter: { points: '7' } })
    assert.deepEqual(
      { items: none.items, total: none.total, lastPage: none.lastPage },
      { items: [], total: 0, lastPage: 1 }
    )
    const seen: string[] = []
    await tickets.findAndCount(
      Ticket.query(),
      {},
      { onQuery: (query) => seen.push(query.toQuery()) }
    )
    assert.lengthOf(seen, 1)
    const query = db.from('tickets')
    ;(query as any).paginate = undefined
    await assert.rejects(
      () => tickets.findAndCount(query),
      'findAndCount needs a Lucid query builder (one with paginate())'
    )
  })

  test('a plain table needs its query; a model runner makes its own', async ({ assert }) => {
    const table = defineFilters({ table: 'tickets' }, {}).with({ config })
    await assert.rejects(
      () => table.findPage(undefined as any),
      'findPage and findAndCount of a plain table need a query: pass db.from(table) as the entity'
    )
    const plain = await table.findPage(db.from('tickets'))
    assert.deepEqual(idsOf(plain.items), [1, 2, 3])
    const own = await tickets.findPage(undefined as any)
    assert.deepEqual(idsOf(own.items), [1, 2, 3])
    const counted = await tickets.findAndCount(undefined as any)
    assert.deepEqual(idsOf(counted.items), [1, 2, 3])
  })

  test('a plain table pages with its own primary key as the tiebreaker', async ({ assert }) => {
    await db.connection().schema.createTable('labels', (table) => {
      table.string('code').primary()
      table.integer('rank').notNullable()
    })
    await db
      .table('labels')
      .multiInsert(['d', 'a', 'c', 'e', 'b'].map((code, index) => ({ code, rank: index % 2 })))
    const labels = defineFilters(
      { table: 'labels', primaryKey: 'code' },
      { sortable: ['rank'], fields: { rank: 'integer', code: 'string' } }
    ).with({ config })
    const seen: string[] = []
    let after: string | undefined
    do {
      const page = await labels.findPage(db.from('labels'), {
        sort: 'rank',
        paginate: { first: 2, after },
      })
      seen.push(...page.items.map((row: any) => row.code))
      after = page.hasNext ? page.endCursor! : undefined
    } while (after)
    assert.deepEqual(seen, ['b', 'c', 'd', 'a', 'e'])
  })

  test('every statement of a page goes through onQuery', async ({ assert }) => {
    const seen: string[] = []
    const page = await tickets.findPage(
      Ticket,
      { sort: 'points' },
      {
        onQuery: (query) => seen.push(query.toQuery()),
      }
    )
    assert.isAbove(seen.length, 0)
    assert.isTrue(seen.every((sql) => /from "?`?tickets/.test(sql)))
    seen.length = 0
    await tickets.findPage(
      Ticket,
      { sort: 'points', paginate: { after: page.endCursor! } },
      {
        onQuery: (query) => seen.push(query.toQuery()),
      }
    )
    assert.isAbove(seen.length, 0)
    // A few-valued sort reads its tie and what lies beyond it, combined or not
    const titles = await tickets.findPage(Ticket, { sort: 'title' })
    seen.length = 0
    const record = { onQuery: (query: { toQuery(): string }) => seen.push(query.toQuery()) }
    await tickets.findPage(
      Ticket,
      { sort: 'title', paginate: { after: titles.endCursor! } },
      record
    )
    assert.isAbove(seen.length, 0)
  })
})
