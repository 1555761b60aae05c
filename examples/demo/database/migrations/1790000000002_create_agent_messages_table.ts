import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_messages'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('thread_id', 36).notNullable().references('id').inTable('agent_threads')
      table.string('run_id', 36).nullable()
      table.string('role', 20).notNullable()
      table.text('content', 'longtext').notNullable()
      table.text('tool_calls', 'longtext').nullable()
      table.text('tool_results', 'longtext').nullable()
      // Follow-up questions proposed after an answer (JSON array), when followUps is on
      table.text('follow_ups').nullable()
      table.dateTime('created_at', { useTz: true, precision: 3 }).notNullable()
      table.index(['thread_id', 'id'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
