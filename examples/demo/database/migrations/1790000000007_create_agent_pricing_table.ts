import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_pricing'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('model_id', 191).notNullable()
      // Micro-units of the currency per million tokens: integers, never floats.
      // A null cache price falls back to the input price.
      table.bigInteger('input_price_per_1m').notNullable()
      table.bigInteger('output_price_per_1m').notNullable()
      table.bigInteger('cache_write_price_per_1m').nullable()
      table.bigInteger('cache_read_price_per_1m').nullable()
      // Rows are never edited: a new price is a new row effective from its insert
      table.dateTime('effective_from', { useTz: true, precision: 3 }).notNullable()
      table.dateTime('created_at', { useTz: true, precision: 3 }).notNullable()
      table.index(['model_id', 'effective_from'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
