/**
 * Two different events for one object the store has never seen, delivered
 * at the same instant: subscription created + updated, dispute
 * opened + updated, a refund before its payment. Target: no 5xx in
 * `BENCH_ROUNDS` (default 1,000) rounds of each pair on each database; also
 * counts rounds whose final rows are wrong.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Dialect } from '../../tests/helpers.ts'
import { gateways } from '../../src/payments/main.ts'
import { signedWebhook } from '../../src/payments/testing.ts'
import { bootPaymentsBench } from '../lib/payments_app.ts'
import { printTable } from '../lib/report.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1000)
const dialects = (process.env.BENCH_DB ?? 'sqlite,pg,mysql').split(',') as Dialect[]
const SECRET = 'fake-bench-secret'

type Pair = (round: number) => [unknown, unknown]

const PAIRS: Record<string, Pair> = {
  'subscription created + updated': (round) => [
    { id: `sc${round}`, type: 'subscription.created', data: { subscriptionId: `sub${round}` } },
    {
      id: `su${round}`,
      type: 'subscription.updated',
      data: { subscriptionId: `sub${round}`, status: 'past_due' },
    },
  ],
  'dispute opened + updated': (round) => [
    {
      id: `do${round}`,
      type: 'payment.disputed',
      data: { disputeId: `dp${round}`, paymentId: `pd${round}` },
    },
    {
      id: `du${round}`,
      type: 'payment.disputed',
      data: { disputeId: `dp${round}`, paymentId: `pd${round}`, reason: 'fraudulent' },
    },
  ],
  'refund before its payment': (round) => [
    {
      id: `rf${round}`,
      type: 'payment.updated',
      data: { paymentId: `pr${round}`, refunds: [{ id: `re${round}`, amount: 100 }] },
    },
    {
      id: `ps${round}`,
      type: 'payment.succeeded',
      data: { paymentId: `pr${round}`, amount: 1000 },
    },
  ],
}

const rows: Record<string, string | number>[] = []
for (const which of dialects) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-first-'))
  const { db, server, close } = await bootPaymentsBench({
    which,
    directory,
    handlers: {},
    providers: { fake: gateways.fake({ secret: SECRET }) },
  })
  const post = async (payload: unknown) => {
    const signed = signedWebhook('fake', payload, { webhookSecret: SECRET })
    const response = await fetch(`${server.url}/payments/webhook/fake`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    })
    await response.arrayBuffer()
    return response.status
  }
  for (const [name, pair] of Object.entries(PAIRS)) {
    let fiveHundreds = 0
    let roundsWith5xx = 0
    const started = performance.now()
    for (let round = 0; round < ROUNDS; round++) {
      const statuses = await Promise.all(pair(round).map(post))
      const failed = statuses.filter((status) => status >= 500).length
      fiveHundreds += failed
      if (failed) roundsWith5xx++
    }
    const elapsed = (performance.now() - started) / 1000
    let wrong = 0
    if (name.startsWith('subscription')) {
      const [{ count }] = await db.from('billing_subscriptions').count('* as count')
      wrong = ROUNDS - Number(count)
    } else if (name.startsWith('dispute')) {
      const [{ count }] = await db
        .from('billing_disputes')
        .where('status', 'open')
        .count('* as count')
      wrong = ROUNDS - Number(count)
    } else {
      const [{ count }] = await db
        .from('billing_payments')
        .where('payment_id', 'like', 'pr%')
        .where('refunded_amount', 100)
        .count('* as count')
      wrong = ROUNDS - Number(count)
    }
    rows.push({
      'db': which,
      'pair': name,
      'rounds': ROUNDS,
      'rounds with a 5xx (target 0)': roundsWith5xx,
      '5xx answers': fiveHundreds,
      'wrong final rows': wrong,
      'rounds/s': Math.round(ROUNDS / elapsed),
    })
  }
  await close()
  await rm(directory, { recursive: true, force: true })
}

printTable(
  `Concurrent first deliveries of two events for one new object (${ROUNDS} rounds each)`,
  rows
)
