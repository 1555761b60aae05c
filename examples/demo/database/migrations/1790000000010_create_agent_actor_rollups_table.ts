import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Spend per UTC day and actor ("agent_actor_rollups"): the narrow rollup
 * "/spend" reads for its per-actor rows, written in the same transaction as
 * each usage row. Created with the sums of "agent_rollups", so an app
 * upgrading keeps its history.
 */
export default class extends BaseSchema {
  protected tableName = 'agent_actor_rollups'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('day', 10).notNullable()
      table.string('actor_ref', 191).notNullable()
      table.integer('model_calls').notNullable().defaultTo(0)
      table.integer('unknown_usage_calls').notNullable().defaultTo(0)
      table.integer('unpriced_calls').notNullable().defaultTo(0)
      table.bigInteger('uncached_input_tokens').notNullable().defaultTo(0)
      table.bigInteger('cache_read_tokens').notNullable().defaultTo(0)
      table.bigInteger('cache_write_tokens').notNullable().defaultTo(0)
      table.bigInteger('output_tokens').notNullable().defaultTo(0)
      table.bigInteger('reasoning_tokens').notNullable().defaultTo(0)
      // Micro-units of the currency
      table.bigInteger('cost').notNullable().defaultTo(0)
      // Leads with the day: a window's rows are one range of the index
      table.unique(['day', 'actor_ref'])
    })
    this.defer(async (db) => {
      const counters = [
        'model_calls',
        'unknown_usage_calls',
        'unpriced_calls',
        'uncached_input_tokens',
        'cache_read_tokens',
        'cache_write_tokens',
        'output_tokens',
        'reasoning_tokens',
        'cost',
      ]
      const sums = counters.map((column) => 'sum(' + column + ')')
      await db.rawQuery(
        'insert into agent_actor_rollups (day, actor_ref, ' +
          counters.join(', ') +
          ') ' +
          'select day, actor_ref, ' +
          sums.join(', ') +
          ' from agent_rollups ' +
          'group by day, actor_ref having sum(model_calls) > 0'
      )
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
