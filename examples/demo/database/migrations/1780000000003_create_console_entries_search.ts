import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Full-text search over the summaries of the adonis-atrium console's entries:
 * an FTS5 table kept by triggers on SQLite, a generated tsvector column with
 * a GIN index on PostgreSQL, a FULLTEXT index on MariaDB/MySQL.
 */
export default class extends BaseSchema {
  protected tableName = 'console_entries_search'

  #dialect() {
    const name = this.db.dialect.name
    if (name === 'postgres') return 'postgres'
    if (name === 'mysql') return 'mysql'
    return 'sqlite'
  }

  async up() {
    const dialect = this.#dialect()
    if (dialect === 'postgres') {
      // punctuation splits words, so "/users/12" is found by "users"
      this.schema.raw(
        'ALTER TABLE console_entries ADD COLUMN summary_search tsvector GENERATED ALWAYS AS ' +
          "(to_tsvector('simple', regexp_replace(summary, '[[:punct:][:space:]]+', ' ', 'g'))) STORED"
      )
      this.schema.raw(
        'CREATE INDEX console_entries_summary_search ON console_entries USING gin (summary_search)'
      )
    } else if (dialect === 'mysql') {
      // COPY: MariaDB's in-place build leaves out the existing rows when the index is added again after a rollback
      this.schema.raw(
        'ALTER TABLE console_entries ADD FULLTEXT INDEX console_entries_summary_search (summary), ALGORITHM=COPY'
      )
    } else {
      // external content: the index refers to console_entries' rowids and stores no copy
      this.schema.raw(
        'CREATE VIRTUAL TABLE console_entries_search USING fts5(summary, ' +
          "content='console_entries', content_rowid='rowid', tokenize='unicode61')"
      )
      this.schema.raw(
        'CREATE TRIGGER console_entries_search_insert AFTER INSERT ON console_entries BEGIN ' +
          'INSERT INTO console_entries_search (rowid, summary) VALUES (new.rowid, new.summary); END'
      )
      this.schema.raw(
        'CREATE TRIGGER console_entries_search_delete AFTER DELETE ON console_entries BEGIN ' +
          'INSERT INTO console_entries_search (console_entries_search, rowid, summary) ' +
          "VALUES ('delete', old.rowid, old.summary); END"
      )
      this.schema.raw(
        'CREATE TRIGGER console_entries_search_update AFTER UPDATE OF summary ON console_entries BEGIN ' +
          'INSERT INTO console_entries_search (console_entries_search, rowid, summary) ' +
          "VALUES ('delete', old.rowid, old.summary); " +
          'INSERT INTO console_entries_search (rowid, summary) VALUES (new.rowid, new.summary); END'
      )
      // entries recorded before this migration
      this.schema.raw(
        "INSERT INTO console_entries_search (console_entries_search) VALUES ('rebuild')"
      )
    }
  }

  async down() {
    const dialect = this.#dialect()
    if (dialect === 'postgres') {
      this.schema.raw('DROP INDEX IF EXISTS console_entries_summary_search')
      this.schema.raw('ALTER TABLE console_entries DROP COLUMN IF EXISTS summary_search')
    } else if (dialect === 'mysql') {
      this.schema.alterTable('console_entries', (table) => {
        table.dropIndex(['summary'], 'console_entries_summary_search')
      })
    } else {
      for (const trigger of ['insert', 'delete', 'update']) {
        this.schema.raw('DROP TRIGGER IF EXISTS console_entries_search_' + trigger)
      }
      this.schema.raw('DROP TABLE IF EXISTS console_entries_search')
    }
  }
}
