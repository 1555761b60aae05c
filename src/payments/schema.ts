import type { Knex } from 'knex'
import { TABLES } from './store.ts'

type Schema = Knex.SchemaBuilder

/**
 * The six billing tables, one function each; the published migrations hold
 * the same definitions. `billing_payments.external_reference` is not here:
 * the provider adds it at boot (§9).
 */
export const BILLING_TABLE_BUILDERS: Record<
  keyof typeof TABLES,
  (table: Knex.CreateTableBuilder) => void
> = {
  events(table) {
    table.increments('id')
    table.string('provider', 100).notNullable()
    table.string('event_id', 191).notNullable()
    table.string('type', 191).notNullable()
    table.string('status', 20).notNullable()
    table.integer('attempts').notNullable().defaultTo(1)
    table.text('raw', 'longtext').notNullable()
    table.text('normalized', 'longtext').notNullable()
    table.text('error').nullable()
    table.string('trace_id', 64).nullable()
    table.bigInteger('locked_until').notNullable().defaultTo(0)
    table.dateTime('processed_at', { useTz: true }).nullable()
    table.dateTime('created_at', { useTz: true }).notNullable()
    table.dateTime('updated_at', { useTz: true }).notNullable()
    table.unique(['provider', 'event_id'])
    table.index(['status'])
  },
  payments(table) {
    table.increments('id')
    table.string('provider', 100).notNullable()
    table.string('payment_id', 191).notNullable()
    table.string('status', 20).notNullable()
    table.bigInteger('amount').notNullable().defaultTo(0)
    table.string('currency', 8).nullable()
    table.bigInteger('refunded_amount').notNullable().defaultTo(0)
    table.string('customer_id', 191).nullable()
    table.dateTime('paid_at', { useTz: true }).nullable()
    table.dateTime('created_at', { useTz: true }).notNullable()
    table.dateTime('updated_at', { useTz: true }).notNullable()
    table.unique(['provider', 'payment_id'])
  },
  refunds(table) {
    table.increments('id')
    table.string('provider', 100).notNullable()
    table.string('refund_id', 191).notNullable()
    table.string('payment_id', 191).notNullable()
    table.bigInteger('amount').notNullable()
    table.string('currency', 8).nullable()
    table.dateTime('created_at', { useTz: true }).notNullable()
    table.dateTime('updated_at', { useTz: true }).notNullable()
    table.unique(['provider', 'refund_id'])
    table.index(['provider', 'payment_id'])
  },
  disputes(table) {
    table.increments('id')
    table.string('provider', 100).notNullable()
    table.string('dispute_id', 191).notNullable()
    table.string('payment_id', 191).notNullable()
    table.string('status', 20).notNullable()
    table.string('outcome', 20).nullable()
    table.bigInteger('amount').nullable()
    table.string('currency', 8).nullable()
    table.string('reason', 255).nullable()
    table.dateTime('actionable_until', { useTz: true }).nullable()
    table.dateTime('created_at', { useTz: true }).notNullable()
    table.dateTime('updated_at', { useTz: true }).notNullable()
    table.unique(['provider', 'dispute_id'])
    table.index(['provider', 'payment_id'])
  },
  subscriptions(table) {
    table.increments('id')
    table.string('provider', 100).notNullable()
    table.string('subscription_id', 191).notNullable()
    table.string('customer_id', 191).nullable()
    table.string('status', 40).notNullable()
    table.string('plan_id', 191).nullable()
    table.dateTime('current_period_end', { useTz: true }).nullable()
    table.dateTime('canceled_at', { useTz: true }).nullable()
    table.string('external_reference', 191).nullable().index()
    table.dateTime('created_at', { useTz: true }).notNullable()
    table.dateTime('updated_at', { useTz: true }).notNullable()
    table.unique(['provider', 'subscription_id'])
  },
  audit(table) {
    table.increments('id')
    table.string('provider', 100).notNullable()
    table.string('type', 64).notNullable()
    table.text('reason').nullable()
    table.string('trace_id', 64).nullable()
    table.dateTime('created_at', { useTz: true }).notNullable()
  },
}

/**
 * Creates every billing table that does not exist yet (tests and the demo).
 */
export async function createBillingTables(schema: () => Schema) {
  for (const [key, build] of Object.entries(BILLING_TABLE_BUILDERS)) {
    const name = TABLES[key as keyof typeof TABLES]
    if (!(await schema().hasTable(name))) {
      await schema().createTable(name, build)
    }
  }
}

export async function dropBillingTables(schema: () => Schema) {
  for (const name of Object.values(TABLES)) {
    await schema().dropTableIfExists(name)
  }
}
