import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Failed runs per UTC day and error code ("agent_error_rollups"), written
 * in the same transaction as each run end: "/reliability"'s error
 * families. A failure without a code counts as "unknown".
 */
export default class extends BaseSchema {
  protected tableName = 'agent_error_rollups'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('day', 10).notNullable()
      table.string('error_code', 64).notNullable()
      table.integer('runs_failed').notNullable().defaultTo(0)
      // Leads with the day: a window's rows are one range of the index
      table.unique(['day', 'error_code'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
