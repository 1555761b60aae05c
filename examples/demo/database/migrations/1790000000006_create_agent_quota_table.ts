import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_quota'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      table.string('actor_ref', 191).notNullable()
      table.string('day', 10).notNullable()
      // Tokens billed, and tokens held by model calls in flight
      table.bigInteger('used_tokens').notNullable().defaultTo(0)
      table.bigInteger('reserved_tokens').notNullable().defaultTo(0)
      table.dateTime('updated_at', { useTz: true, precision: 3 }).notNullable()
      table.unique(['actor_ref', 'day'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
