import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Tables of adonis-atrium collaboration: documents, their update log,
 * versions and comments.
 */
export default class extends BaseSchema {
  async up() {
    const binary =
      { postgres: 'bytea', mysql: 'longblob' }[this.db.dialect.name as string] ?? 'blob'

    this.schema.createTable('collab_documents', (table) => {
      table.string('name', 255).primary()
      table.specificType('state', binary).notNullable()
      table.string('updated_at', 40).notNullable()
    })
    this.schema.createTable('collab_updates', (table) => {
      table.bigIncrements('id')
      table.string('document_name', 255).notNullable().index()
      table.specificType('update', binary).notNullable()
    })
    this.schema.createTable('collab_versions', (table) => {
      table.string('id', 64).primary()
      table.string('document_name', 255).notNullable()
      table.integer('seq').notNullable()
      table.string('label', 255).nullable()
      table.string('created_by', 255).nullable()
      table.string('created_at', 40).notNullable()
      table.specificType('snapshot', binary).notNullable()
      table.unique(['document_name', 'seq'])
    })
    this.schema.createTable('collab_comments', (table) => {
      table.string('id', 64).primary()
      table.string('document_name', 255).notNullable()
      table.string('space', 255).notNullable()
      // mediumtext on MySQL: a comment's text may exceed the 64 KiB of text
      table.text('anchor', 'mediumtext').notNullable()
      table.text('body', 'mediumtext').notNullable()
      table.string('user_id', 255).notNullable()
      table.string('author_name', 255).nullable()
      table.string('resolved_at', 40).nullable()
      table.string('created_at', 40).notNullable()
      table.string('updated_at', 40).nullable()
      table.index(['document_name', 'space'])
    })
  }

  async down() {
    this.schema.dropTableIfExists('collab_comments')
    this.schema.dropTableIfExists('collab_versions')
    this.schema.dropTableIfExists('collab_updates')
    this.schema.dropTableIfExists('collab_documents')
  }
}
