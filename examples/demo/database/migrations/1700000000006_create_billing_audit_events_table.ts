import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'billing_audit_events'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.increments('id')
      table.string('provider', 100).notNullable()
      table.string('type', 64).notNullable()
      table.text('reason').nullable()
      table.string('trace_id', 64).nullable()
      table.dateTime('created_at', { useTz: true }).notNullable()
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
