import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_quota_holds'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      // One row per model call in flight: the tokens it holds in agent_quota until its lease ends
      table.string('id', 36).primary()
      table.string('actor_ref', 191).notNullable()
      table.string('day', 10).notNullable()
      table.bigInteger('tokens').notNullable()
      // Epoch milliseconds: the next reservation of the actor's day gives back a hold past it
      table.bigInteger('expires_at').notNullable()
      table.index(['actor_ref', 'day', 'expires_at'])
    })
  }

  async down() {
    this.schema.dropTable(this.tableName)
  }
}
