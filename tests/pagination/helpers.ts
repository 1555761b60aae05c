import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { type DateTime } from 'luxon'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { Database } from '@adonisjs/lucid/database'
import { BaseModel, belongsTo, column, hasMany } from '@adonisjs/lucid/orm'
import type { BelongsTo, HasMany } from '@adonisjs/lucid/types/relations'
import type { Group } from '@japa/runner/core'
import { TMP_ROOT, databaseConfig, dialect } from '../helpers.ts'

const DIRECTORY = join(TMP_ROOT, 'pagination')

/**
 * A Lucid database on the selected dialect that lives for a whole test group
 * (SQLite in tmp/run-<id>/pagination), so the seeded tables are shared by its tests.
 */
export async function openDatabase() {
  await mkdir(DIRECTORY, { recursive: true })
  const app = new AppFactory().create(new URL('../../', import.meta.url))
  const db = new Database(databaseConfig(DIRECTORY), new LoggerFactory().create(), new Emitter(app))
  return db
}

export class PgTestCustomer extends BaseModel {
  static table = 'pg_test_customers'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare name: string

  @hasMany(() => PgTestOrder, { foreignKey: 'customerId' })
  declare orders: HasMany<typeof PgTestOrder>
}

export class PgTestOrder extends BaseModel {
  static table = 'pg_test_orders'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare customerId: number

  @column()
  declare status: string

  @column()
  declare reference: string

  @column()
  declare amount: number

  @column({ consume: (value) => (value === null ? null : Boolean(value)) })
  declare paid: boolean

  @column.dateTime()
  declare shippedAt: DateTime | null

  @column.dateTime()
  declare createdAt: DateTime

  @belongsTo(() => PgTestCustomer, { foreignKey: 'customerId' })
  declare customer: BelongsTo<typeof PgTestCustomer>
}

/**
 * For a test group: opens the database, binds the models to it, seeds
 * pg_test_orders (see `createSchema`) and hands the database to `ready`; drops
 * the tables and closes the connections after the group.
 */
export function withSeededOrders(
  group: Group,
  ready: (db: Database) => void | Promise<void> = () => {}
) {
  group.setup(async () => {
    const db = await openDatabase()
    BaseModel.useAdapter(db.modelAdapter())
    await createSchema(db)
    await ready(db)
    return async () => {
      await dropSchema(db)
      await db.manager.closeAll()
    }
  })
}

/**
 * Deterministic pseudo-random numbers (mulberry32), so a failing walk replays.
 */
export function random(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const STATUSES = ['paid', 'pending', 'refunded', 'failed']

function stamp(base: number, micros: number) {
  const date = new Date(base + Math.floor(micros / 1000))
  const pad = (value: number, size = 2) => String(value).padStart(size, '0')
  return (
    `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.` +
    pad(((micros % 1_000_000) + 1_000_000) % 1_000_000, 6)
  )
}

export const ROWS = 240

/**
 * Creates pg_test_customers and pg_test_orders with the indexes keyset pages
 * seek on, and seeds pseudo-random rows: ties on every column, NULL blocks in
 * shipped_at, timestamps a microsecond apart inside one millisecond.
 */
export async function createSchema(db: Database) {
  await dropSchema(db)
  await db.connection().schema.createTable('pg_test_customers', (table) => {
    table.increments('id')
    table.string('name').notNullable()
  })
  await db.connection().schema.createTable('pg_test_orders', (table) => {
    table.increments('id')
    table.integer('customer_id').unsigned().notNullable()
    table.string('status', 20).notNullable()
    table.string('reference', 40).notNullable()
    table.integer('amount').notNullable()
    table.boolean('paid').notNullable()
    table.datetime('shipped_at', { precision: 6 }).nullable()
    table.datetime('created_at', { precision: 6 }).notNullable()
    table.index(['created_at', 'id'], 'pg_test_orders_created_idx')
    table.index(['status', 'amount', 'id'], 'pg_test_orders_status_idx')
  })
  // A nullable keyset column needs its index in the order the keyset walks: NULLs first
  await db.rawQuery(
    dialect() === 'pg'
      ? 'create index pg_test_orders_shipped_idx on pg_test_orders (shipped_at nulls first, id)'
      : 'create index pg_test_orders_shipped_idx on pg_test_orders (shipped_at, id)'
  )

  const next = random(20261121)
  const names = ['Ana Souza', 'Bruno Lima', 'ANAÏS Martin', 'Carla Dias', 'Diego 100% Real']
  await db.table('pg_test_customers').multiInsert(names.map((name) => ({ name })))

  const base = Date.UTC(2025, 0, 1)
  const rows = []
  let nullBlock = 0
  for (let index = 0; index < ROWS; index++) {
    if (nullBlock === 0 && next() < 0.08) nullBlock = 5 + Math.floor(next() * 12)
    // Many rows share a created_at, others differ by one microsecond in the same millisecond
    const micros = Math.floor(next() * 40) * 1000 + (next() < 0.5 ? Math.floor(next() * 3) : 0)
    rows.push({
      customer_id: 1 + Math.floor(next() * names.length),
      status: STATUSES[Math.floor(next() * STATUSES.length)],
      reference: `${['ana', 'Bob', 'cAROL', '50%_off'][index % 4]}-${index}`,
      amount: Math.floor(next() * 6) * 50,
      paid: next() < 0.5,
      shipped_at:
        nullBlock > 0
          ? null
          : stamp(base + 86_400_000, Math.floor(next() * 30) * 1000 + (index % 2)),
      created_at: stamp(base, micros),
    })
    if (nullBlock > 0) nullBlock--
  }
  for (let start = 0; start < rows.length; start += 100) {
    await db.table('pg_test_orders').multiInsert(rows.slice(start, start + 100))
  }
  if (dialect() === 'pg') await db.rawQuery('analyze pg_test_orders')
}

export async function dropSchema(db: Database) {
  await db.connection().schema.dropTableIfExists('pg_test_orders')
  await db.connection().schema.dropTableIfExists('pg_test_customers')
}

function orderBy(order: [string, 'asc' | 'desc', boolean?][]) {
  return order
    .map(([name, direction, nullable]) =>
      nullable && dialect() === 'pg'
        ? `${name} ${direction} nulls ${direction === 'asc' ? 'first' : 'last'}`
        : `${name} ${direction}`
    )
    .join(', ')
}

/**
 * The ids of pg_test_orders in a plain ORDER BY (NULLs smallest on every
 * dialect), optionally with `amount >= filter.amount.gte`.
 */
export async function expectedIds(
  db: Database,
  order: [string, 'asc' | 'desc', boolean?][],
  filter?: any
) {
  const where = filter ? `where amount >= ${Number(filter.amount.gte)}` : ''
  const result = await db.rawQuery(
    `select id from pg_test_orders ${where} order by ${orderBy(order)}`
  )
  const rows = dialect() === 'pg' ? result.rows : dialect() === 'mysql' ? result[0] : result
  return rows.map((row: any) => Number(row.id))
}
