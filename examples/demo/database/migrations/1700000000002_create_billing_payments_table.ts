import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'billing_payments'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.increments('id')
      table.string('provider', 100).notNullable()
      table.string('payment_id', 191).notNullable()
      table.string('status', 20).notNullable()
      table.bigInteger('amount').notNullable().defaultTo(0)
      table.string('currency', 8).nullable()
      table.bigInteger('refunded_amount').notNullable().defaultTo(0)
      table.string('customer_id', 191).nullable()
      table.dateTime('paid_at', { useTz: true }).nullable()
      table.string('external_reference', 191).nullable().index()
      // The gateway's time (epoch ms) of the newest status-bearing event applied
      table.bigInteger('last_event_at').nullable()
      table.dateTime('created_at', { useTz: true }).notNullable()
      table.dateTime('updated_at', { useTz: true }).notNullable()
      table.unique(['provider', 'payment_id'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
