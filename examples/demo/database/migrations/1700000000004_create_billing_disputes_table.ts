import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'billing_disputes'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
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
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
