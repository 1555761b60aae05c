import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'billing_webhook_events'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
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
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
