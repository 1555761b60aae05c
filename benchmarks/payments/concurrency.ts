/**
 * 100 concurrent deliveries of one Stripe event id: exactly one handler
 * run, one ledger row, one payment row, and no 5xx (the in-flight answer is
 * a 409 the gateway retries). Baseline: the one delivery that must succeed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Dialect } from '../../tests/helpers.ts'
import { signedWebhook } from '../../src/payments/testing.ts'
import { runLoad } from '../lib/http_app.ts'
import { STRIPE_SECRET, bootPaymentsBench } from '../lib/payments_app.ts'
import { printTable } from '../lib/report.ts'

const dialects = (process.env.BENCH_DB ?? 'sqlite,pg,mysql').split(',') as Dialect[]
const rows: Record<string, string | number>[] = []

for (const which of dialects) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-race-'))
  let runs = 0
  const { db, server, close } = await bootPaymentsBench({
    which,
    directory,
    handlers: {
      'payment.succeeded': async () => {
        runs++
        await new Promise((resolve) => setTimeout(resolve, 5))
      },
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
    { webhookSecret: STRIPE_SECRET }
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
  await close()
  await rm(directory, { recursive: true, force: true })
}

printTable('100 concurrent deliveries of one event id (409 = documented in-flight answer)', rows)
