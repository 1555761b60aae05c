import type { ApplicationService } from '@adonisjs/core/types'
import { MigrationRunner } from '@adonisjs/lucid/migration'

/**
 * Brings the demo's SQLite file up to date on every start, and seeds the
 * pagination page's orders on the first.
 */
export async function migrate(app: ApplicationService) {
  const db = await app.container.make('lucid.db')
  const runner = new MigrationRunner(db, app, { direction: 'up' })
  await runner.run()
  if (runner.error) {
    throw runner.error
  }
  const { seedOrders } = await import('../database/seed_orders.ts')
  const logger = await app.container.make('logger')
  await seedOrders(db, (message) => logger.info(message))
}
