import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Per-minute request rollups of the adonis-atrium console: one row per
 * minute, method and route pattern, added to in the transaction that writes
 * the entries. The health page reads these rows instead of the entries.
 */
export default class extends BaseSchema {
  protected tableName = 'console_rollups'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.bigIncrements('id')
      // Unix ms of the minute's start
      table.bigInteger('minute').notNullable()
      table.string('method', 10).notNullable()
      // Binary on MariaDB/MySQL, so /Users and /users stay two routes as elsewhere
      table.string('route', 191).notNullable().collate('utf8mb4_bin')
      table.integer('requests').notNullable().defaultTo(0)
      // Responses with a 5xx status
      table.integer('errors').notNullable().defaultTo(0)
      table.double('duration_sum_ms').notNullable().defaultTo(0)
      table.double('duration_max_ms').notNullable().defaultTo(0)
      // Latency buckets as "index:count" pairs (eight log-scale buckets per doubling)
      table.text('histogram').notNullable()
      table.unique(['minute', 'method', 'route'], {
        indexName: 'console_rollups_minute_route_unique',
      })
    })
  }

  async down() {
    this.schema.dropTableIfExists(this.tableName)
  }
}
