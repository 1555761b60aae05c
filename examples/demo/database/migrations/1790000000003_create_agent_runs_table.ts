import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_runs'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.string('id', 36).primary()
      table.string('thread_id', 36).notNullable().references('id').inTable('agent_threads')
      table.string('actor_ref', 191).notNullable()
      table.string('agent_name', 100).notNullable()
      table.string('status', 20).notNullable()
      table.string('error_code', 64).nullable()
      table.integer('steps').notNullable().defaultTo(0)
      table.dateTime('created_at', { useTz: true, precision: 3 }).notNullable()
      table.dateTime('finished_at', { useTz: true, precision: 3 }).nullable()
      // Measured by the process that ran it, so percentiles need no date arithmetic in SQL
      table.integer('duration_ms').nullable()
      table.index(['thread_id'])
      table.index(['status', 'created_at'])
      table.index(['finished_at'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
