/**
 * 100 concurrent deliveries of one Stripe event id: exactly one handler
 * run, one ledger row, one payment row, and no 5xx (the in-flight answer is
 * a 409 the gateway retries). Baseline: the one delivery that must succeed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Database } from '@adonisjs/lucid/database'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { defineConfig, gateways } from '../../src/payments/main.ts'
import { signedWebhook } from '../../src/payments/testing.ts'
import { createBillingTables, dropBillingTables } from '../../src/payments/schema.ts'
import { bootHttpApp, runLoad } from '../lib/http_app.ts'
import { printTable } from '../lib/report.ts'

const SECRET = 'whsec_bench'
const dialects = (process.env.BENCH_DB ?? 'sqlite,pg').split(',') as Dialect[]
const rows: Record<string, string | number>[] = []

for (const which of dialects) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-race-'))
  const db = new Database(
    { connection: which, connections: { [which]: connectionConfig(which, directory) } },
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(pathToFileURL(`${directory}/`)))
  )
  const schema = () => db.connection().schema
  await dropBillingTables(schema)
  await createBillingTables(schema)

  let runs = 0
  const server = await bootHttpApp({
    appRoot: pathToFileURL(`${directory}/`),
    providers: [
      () => import('@adonisjs/lucid/database_provider'),
      () => import('../../providers/payments_provider.ts'),
    ],
    config: {
      database: { connection: which, connections: { [which]: connectionConfig(which, directory) } },
      payments: defineConfig({
        providers: { stripe: gateways.stripe({ webhookSecret: SECRET }) },
        billing: {
          handlers: {
            'payment.succeeded': async () => {
              runs++
              await new Promise((resolve) => setTimeout(resolve, 5))
            },
          },
        },
      }),
    },
  })

  const delivery = signedWebhook(
    'stripe',
    {
      id: 'evt_race_1',
      object: 'event',
      type: 'payment_intent.succeeded',
      created: 1_700_000_000,
      data: { object: { id: 'pi_race_1', amount: 990, amount_received: 990, currency: 'usd' } },
    },
    { webhookSecret: SECRET }
  )
  const result = await runLoad({
    url: `${server.url}/payments/webhook/stripe`,
    concurrency: 100,
    requests: 100,
    bodies: 'same',
    body: delivery.body,
    headers: delivery.headers,
  })
  // The gateway's retry after the first delivery finished
  const retry = await runLoad({
    url: `${server.url}/payments/webhook/stripe`,
    concurrency: 1,
    requests: 1,
    bodies: 'same',
    body: delivery.body,
    headers: delivery.headers,
  })
  const [{ count: ledger }] = await db.from('billing_webhook_events').count('* as count')
  const [{ count: payments }] = await db.from('billing_payments').count('* as count')
  const fiveHundreds = Object.entries(result.statuses)
    .filter(([status]) => status.startsWith('5'))
    .reduce((sum, [, count]) => sum + count, 0)
  rows.push({
    'db': which,
    'responses': Object.entries(result.statuses)
      .map(([status, count]) => `${status}x${count}`)
      .join(' '),
    'retry': Object.keys(retry.statuses).join(','),
    'handler runs (expected 1)': runs,
    'ledger rows (1)': Number(ledger),
    'payment rows (1)': Number(payments),
    '5xx (0)': fiveHundreds,
  })
  await server.close()
  await dropBillingTables(schema)
  await db.manager.closeAll()
  await rm(directory, { recursive: true, force: true })
}

printTable('100 concurrent deliveries of one event id (409 = documented in-flight answer)', rows)
