import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Run durations per UTC day and agent as a histogram
 * ("agent_duration_rollups"): one row per log-scale bucket (5% wide) that
 * holds a run, written in the same transaction as each run end, so
 * "/reliability"'s p95 sums bucket counts instead of ranking every run.
 */
export default class extends BaseSchema {
  protected tableName = 'agent_duration_rollups'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('day', 10).notNullable()
      table.string('agent_name', 100).notNullable()
      table.smallint('bucket').notNullable()
      table.integer('runs').notNullable().defaultTo(0)
      // Leads with the day: a window's rows are one range of the index
      table.unique(['day', 'agent_name', 'bucket'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
