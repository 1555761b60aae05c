import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'billing_audit_events'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      // Rejections are counted, not stored one by one: one row per provider,
      // type and reason per minute, with the last sample's trace id
      table.increments('id')
      table.string('provider', 100).notNullable()
      table.string('type', 64).notNullable()
      table.text('reason').nullable()
      table.string('trace_id', 64).nullable()
      // sha256 of provider, type and reason
      table.string('bucket_key', 64).notNullable()
      // Start of the minute counted (epoch ms)
      table.bigInteger('window_start').notNullable()
      table.integer('occurrences').notNullable().defaultTo(1)
      table.dateTime('created_at', { useTz: true }).notNullable()
      table.dateTime('updated_at', { useTz: true }).notNullable()
      table.unique(['bucket_key', 'window_start'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
