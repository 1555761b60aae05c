import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_tool_calls'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('run_id', 36).notNullable().references('id').inTable('agent_runs')
      table.string('thread_id', 36).notNullable()
      table.string('actor_ref', 191).notNullable()
      // The model's own id: a resumed run finds the call it already ran
      table.string('tool_call_id', 191).notNullable()
      table.string('tool_name', 64).notNullable()
      table.string('status', 20).notNullable()
      table.text('input', 'longtext').notNullable()
      table.text('output', 'longtext').nullable()
      table.string('error_code', 64).nullable()
      table.integer('execution_ms').nullable()
      table.dateTime('created_at', { useTz: true, precision: 3 }).notNullable()
      table.dateTime('updated_at', { useTz: true, precision: 3 }).notNullable()
      table.unique(['run_id', 'tool_call_id'])
      table.index(['status', 'created_at'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
