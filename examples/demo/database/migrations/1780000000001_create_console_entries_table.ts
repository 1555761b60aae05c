import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Entries recorded by the adonis-atrium console. Ids are time-ordered hex,
 * so (type, id) serves lists, keyset pages and age cutoffs per type.
 */
export default class extends BaseSchema {
  protected tableName = 'console_entries'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.string('id', 24).primary()
      table.string('batch_id', 24).notNullable()
      table.string('type', 16).notNullable()
      table.string('summary', 255).notNullable()
      table.integer('status').nullable()
      table.string('method', 10).nullable()
      table.double('duration_ms').nullable()
      table.boolean('slow').notNullable().defaultTo(false)
      table.string('tags', 255).notNullable().defaultTo('')
      table.bigInteger('created_at').notNullable()
      table.text('content', 'longtext').notNullable()
      table.index(['type', 'id'], 'console_entries_type_id_index')
      table.index(['batch_id', 'id'], 'console_entries_batch_id_index')
    })
  }

  async down() {
    this.schema.dropTableIfExists(this.tableName)
  }
}
