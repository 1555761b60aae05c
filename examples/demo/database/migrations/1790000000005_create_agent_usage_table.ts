import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_usage'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('run_id', 36).notNullable().references('id').inTable('agent_runs')
      table.string('thread_id', 36).notNullable()
      table.string('actor_ref', 191).notNullable()
      table.string('agent_name', 100).notNullable()
      table.string('model', 191).notNullable()
      table.string('kind', 20).notNullable()
      table.integer('step').notNullable()
      // Disjoint buckets: their sum is every token billed for the call
      table.boolean('usage_known').notNullable()
      table.integer('uncached_input_tokens').notNullable().defaultTo(0)
      table.integer('cache_read_tokens').notNullable().defaultTo(0)
      table.integer('cache_write_tokens').notNullable().defaultTo(0)
      table.integer('output_tokens').notNullable().defaultTo(0)
      table.integer('reasoning_tokens').notNullable().defaultTo(0)
      // Priced when written and never repriced: micro-units of the currency,
      // the agent_pricing row used (null unless estimated) and how it was found
      table.bigInteger('price_id').nullable()
      table.bigInteger('cost').notNullable().defaultTo(0)
      table.string('cost_source', 20).notNullable()
      table.string('day', 10).notNullable()
      table.dateTime('created_at', { useTz: true, precision: 3 }).notNullable()
      table.index(['actor_ref', 'day'])
      table.index(['run_id'])
      table.index(['day', 'thread_id'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
