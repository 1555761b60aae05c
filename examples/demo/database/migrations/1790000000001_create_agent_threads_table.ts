import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_threads'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.string('id', 36).primary()
      table.string('actor_ref', 191).notNullable()
      table.string('title', 200).nullable()
      table.string('default_agent', 100).nullable()
      table.dateTime('deleted_at', { useTz: true, precision: 3 }).nullable()
      table.dateTime('created_at', { useTz: true, precision: 3 }).notNullable()
      table.dateTime('updated_at', { useTz: true, precision: 3 }).notNullable()
      table.index(['actor_ref', 'updated_at'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
