import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'billing_subscriptions'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.increments('id')
      table.string('provider', 100).notNullable()
      table.string('subscription_id', 191).notNullable()
      table.string('customer_id', 191).nullable()
      table.string('status', 40).notNullable()
      table.string('plan_id', 191).nullable()
      table.dateTime('current_period_end', { useTz: true }).nullable()
      table.dateTime('canceled_at', { useTz: true }).nullable()
      table.string('external_reference', 191).nullable().index()
      // The gateway's time (epoch ms) of the newest event that set the status
      table.bigInteger('last_event_at').nullable()
      table.dateTime('created_at', { useTz: true }).notNullable()
      table.dateTime('updated_at', { useTz: true }).notNullable()
      table.unique(['provider', 'subscription_id'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
