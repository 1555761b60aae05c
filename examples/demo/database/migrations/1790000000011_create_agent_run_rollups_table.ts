import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Finished runs per UTC day and agent ("agent_run_rollups"): the narrow
 * rollup "/reliability" reads for its counts, rates and trend, written in
 * the same transaction as each run end. Created with the sums of
 * "agent_rollups", so an app upgrading keeps its history.
 */
export default class extends BaseSchema {
  protected tableName = 'agent_run_rollups'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('day', 10).notNullable()
      table.string('agent_name', 100).notNullable()
      table.integer('runs_succeeded').notNullable().defaultTo(0)
      table.integer('runs_failed').notNullable().defaultTo(0)
      table.integer('runs_cancelled').notNullable().defaultTo(0)
      // Leads with the day: a window's rows are one range of the index
      table.unique(['day', 'agent_name'])
    })
    this.defer(async (db) => {
      await db.rawQuery(
        'insert into agent_run_rollups (day, agent_name, runs_succeeded, runs_failed, runs_cancelled) ' +
          'select day, agent_name, sum(runs_succeeded), sum(runs_failed), sum(runs_cancelled) ' +
          'from agent_rollups group by day, agent_name ' +
          'having sum(runs_succeeded) + sum(runs_failed) + sum(runs_cancelled) > 0'
      )
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
