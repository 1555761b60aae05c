import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_rollups'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('day', 10).notNullable()
      table.string('model', 191).notNullable()
      table.string('actor_ref', 191).notNullable()
      table.string('agent_name', 100).notNullable()
      // Incremented in the transaction that writes each usage row
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
      // Incremented in the transaction that records each run's end
      table.integer('runs_succeeded').notNullable().defaultTo(0)
      table.integer('runs_failed').notNullable().defaultTo(0)
      table.integer('runs_cancelled').notNullable().defaultTo(0)
      table.unique(['day', 'model', 'actor_ref', 'agent_name'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
