import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Leases of the adonis-atrium console: one row per named job that a fleet of
 * app instances must run once at a time (the scheduled prune). A lease whose
 * expires_at has passed can be taken over, so a crashed holder never blocks
 * the others for longer than the lease's time to live.
 */
export default class extends BaseSchema {
  protected tableName = 'console_leases'

  async up() {
    this.schema.createTable(this.tableName, (table) => {
      table.string('name', 191).primary()
      // A random id of the process holding the lease
      table.string('owner', 64).notNullable()
      // Unix ms after which another process may take the lease
      table.bigInteger('expires_at').notNullable()
    })
  }

  async down() {
    this.schema.dropTableIfExists(this.tableName)
  }
}
