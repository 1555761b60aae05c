import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'billing_refunds'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
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
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
