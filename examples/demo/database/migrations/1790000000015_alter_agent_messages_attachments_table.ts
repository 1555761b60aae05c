import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  protected tableName = 'agent_messages'

  async up() {
    this.schema.alterTable(this.tableName, (table) => {
      // The files a user message carried (JSON array of { id, name, contentType, size })
      table.text('attachments').nullable()
    })
  }

  async down() {
    this.schema.alterTable(this.tableName, (table) => {
      table.dropColumn('attachments')
    })
  }
}
