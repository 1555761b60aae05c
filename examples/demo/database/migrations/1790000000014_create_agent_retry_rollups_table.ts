import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Model calls the gateway retried, per UTC day and agent
 * ("agent_retry_rollups"): what "/reliability" sums as "retries", written in
 * the same transaction as each run end. Also adds "retries" to "agent_runs",
 * the count of one run. Retries count from this migration on.
 */
export default class extends BaseSchema {
  protected tableName = 'agent_retry_rollups'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('day', 10).notNullable()
      table.string('agent_name', 100).notNullable()
      table.integer('retries').notNullable().defaultTo(0)
      // Leads with the day: a window's rows are one range of the index
      table.unique(['day', 'agent_name'])
    })
    this.schema.alterTable('agent_runs', (table) => {
      table.integer('retries').notNullable().defaultTo(0)
    })
  }

  async down() {
    this.schema.alterTable('agent_runs', (table) => {
      table.dropColumn('retries')
    })
    this.schema.dropTable(this.tableName)
  }
}
