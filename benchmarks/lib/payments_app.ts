/**
 * The payments benchmarks' common setup: fresh billing tables in a database
 * of the chosen dialect, then an app with Lucid and the payments provider
 * serving the Stripe route.
 */
import { pathToFileURL } from 'node:url'
import type { Router } from '@adonisjs/core/http'
import { Database } from '@adonisjs/lucid/database'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import type { ConnectionConfig } from '@adonisjs/lucid/types/database'
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { defineConfig, gateways } from '../../src/payments/main.ts'
import { dropStubTables, migrateStubs } from '../../tests/migration_stubs.ts'
import type { PaymentsConfig, WebhookHandlerEntry } from '../../src/payments/types.ts'
import { bootHttpApp } from './http_app.ts'

export const STRIPE_SECRET = 'whsec_bench'

/**
 * The app's connection: a pool of `BENCH_POOL` (Lucid's default is 10); SQLite
 * in WAL mode, as a production SQLite should run.
 */
export function appConnection(which: Dialect, directory: string, pool = 10) {
  const config: any = connectionConfig(which, directory)
  if (which === 'sqlite') {
    config.pool = {
      afterCreate: (connection: any, done: any) => {
        connection.pragma('journal_mode = WAL')
        connection.pragma('synchronous = NORMAL')
        done(null, connection)
      },
    }
  } else {
    config.pool = { min: 2, max: pool }
  }
  return config
}

export async function bootPaymentsBench(options: {
  which: Dialect
  directory: string
  handlers: Record<string, WebhookHandlerEntry>
  /** The app's connection; the test suite's by default */
  connection?: ConnectionConfig
  routes?: (router: Router) => void
  /** Extra providers beside Stripe (e.g. the fake gateway) */
  providers?: PaymentsConfig['providers']
}) {
  const { which, directory } = options
  const appRoot = pathToFileURL(`${directory}/`)
  const db = new Database(
    { connection: which, connections: { [which]: connectionConfig(which, directory) } },
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(appRoot))
  )
  await migrateStubs(db, 'payments')

  const server = await bootHttpApp({
    appRoot,
    providers: [
      () => import('@adonisjs/lucid/database_provider'),
      () => import('../../providers/payments_provider.ts'),
    ],
    config: {
      database: {
        connection: which,
        connections: { [which]: options.connection ?? connectionConfig(which, directory) },
      },
      payments: defineConfig({
        providers: {
          stripe: gateways.stripe({ webhookSecret: STRIPE_SECRET }),
          ...options.providers,
        },
        billing: { handlers: options.handlers },
      }),
    },
    routes: options.routes,
  })

  return {
    db,
    server,
    async close() {
      await server.close()
      await dropStubTables(db, 'payments')
      await db.manager.closeAll()
    },
  }
}
