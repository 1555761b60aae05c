import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Customers and orders for the keyset pagination page, with the indexes its
 * sorts seek on (one per sort the page offers, primary key last).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('customers', (table) => {
      table.increments('id')
      table.string('name').notNullable()
    })
    this.schema.createTable('orders', (table) => {
      table.increments('id')
      table.integer('customer_id').unsigned().notNullable().references('customers.id')
      table.string('reference', 20).notNullable()
      table.string('status', 20).notNullable()
      table.integer('amount').notNullable()
      table.datetime('shipped_at').nullable()
      table.datetime('created_at').notNullable()
      table.index(['created_at', 'id'])
      table.index(['amount', 'id'])
      table.index(['shipped_at', 'id'])
      table.index(['status', 'created_at', 'id'])
      table.index(['status', 'amount', 'id'])
    })
  }

  async down() {
    this.schema.dropTable('orders')
    this.schema.dropTable('customers')
  }
}
