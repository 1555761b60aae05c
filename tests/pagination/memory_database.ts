import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Database } from '@adonisjs/lucid/database'

/**
 * A Lucid database on an in-memory SQLite, with no app boot and no files:
 * for the database-free pagination specs (`nodbTests` of scripts/mutation.ts).
 */
export function memoryDatabase() {
  const app = new AppFactory().create(new URL('../../', import.meta.url))
  return new Database(
    {
      connection: 'memory',
      connections: {
        memory: {
          client: 'better-sqlite3',
          connection: { filename: ':memory:' },
          useNullAsDefault: true,
        },
      },
    },
    new LoggerFactory().create(),
    new Emitter(app)
  )
}
