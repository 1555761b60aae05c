import { test } from '@japa/runner'
import { BillingSync } from '../../src/payments/billing/sync.ts'
import { E_DISPUTE_OUTCOME_MISSING } from '../../src/payments/errors.ts'
import { TABLES } from '../../src/payments/ledger/tables.ts'
import { capabilitiesOf } from '../../src/payments/ledger/dialect.ts'
import type { WebhookEvent } from '../../src/payments/types.ts'
import { billingTables } from './helpers.ts'

/**
 * BillingSync called directly, as the ledger calls it when its claim did not
 * write the payment row (the statement claim writer of MySQL and MariaDB):
 * without `firstSeen`, so the fast insert and the row-locking transaction
 * both run on every database, not only on the one whose claim skips them.
 */
let counter = 0
function event(type: string, data: Record<string, unknown>): WebhookEvent<any> {
  return { id: `evt_sync_${++counter}`, type, data, raw: null, provider: 'fake' }
}

async function setup() {
  const db = await billingTables()
  const sync = new BillingSync(() => db.connection(), capabilitiesOf(db.connection()))
  const row = async (table: string, where: Record<string, unknown>) =>
    db.connection().from(table).where(where).first()
  const payment = () => row(TABLES.payments, { provider: 'fake', payment_id: 'pay_1' })
  const paymentStatus = async () => {
    const stored = await payment()
    return stored?.status
  }
  return { db, sync, row, payment, paymentStatus }
}

test.group('BillingSync without the claim’s first-seen hint', () => {
  test(`a first payment is inserted, and a later one moves the row`, async ({ assert }) => {
    const { sync, payment, paymentStatus } = await setup()
    const failed = await sync.sync(
      event('payment.failed', { paymentId: 'pay_1', amount: 1000, currency: 'BRL' })
    )
    assert.deepEqual(failed, { type: 'payment.failed' })
    assert.equal(await paymentStatus(), 'failed')

    const paid = await sync.sync(
      event('payment.succeeded', { paymentId: 'pay_1', amount: 1000, currency: 'BRL' })
    )
    assert.deepEqual(paid, { type: 'payment.succeeded' })
    const row = await payment()
    assert.equal(row.status, 'paid')
    assert.isNotNull(row.paid_at)
  })

  test(`a first-seen refund with refund lines records the lines`, async ({ assert }) => {
    const { sync, payment, row } = await setup()
    const outcome = await sync.sync(
      event('payment.refunded', {
        paymentId: 'pay_1',
        amount: 1000,
        currency: 'USD',
        refunds: [
          { id: 'rf_1', amount: 300 },
          { id: 'rf_2', amount: 200 },
        ],
      })
    )
    assert.deepEqual(outcome, { type: 'payment.refunded' })
    // a payment.refunded without refundedAmount is a whole refund; its lines are kept apart
    const stored = await payment()
    assert.deepEqual([stored.status, Number(stored.refunded_amount)], ['refunded', 1000])
    const refund = await row(TABLES.refunds, { provider: 'fake', refund_id: 'rf_1' })
    assert.equal(Number(refund.amount), 300)
    assert.equal(refund.currency, 'USD')
  })

  test(`a dispute row is inserted once and then moved, and it moves the payment`, async ({
    assert,
  }) => {
    const { sync, paymentStatus, row } = await setup()
    await sync.sync(event('payment.succeeded', { paymentId: 'pay_1', amount: 1000 }))
    const opened = await sync.sync(
      event('payment.disputed', { disputeId: 'dp_1', paymentId: 'pay_1', amount: 1000 })
    )
    assert.deepEqual(opened, { type: 'payment.disputed' })
    assert.equal(await paymentStatus(), 'disputed')
    await sync.sync(
      event('payment.dispute_closed', {
        disputeId: 'dp_1',
        paymentId: 'pay_1',
        amount: 1000,
        outcome: 'won',
      })
    )
    const closed = await row(TABLES.disputes, { dispute_id: 'dp_1' })
    assert.deepEqual([closed.status, closed.outcome], ['closed', 'won'])
    assert.equal(await paymentStatus(), 'paid')
  })

  test(`a subscription is inserted once and then moved`, async ({ assert }) => {
    const { sync, row } = await setup()
    const created = await sync.sync(
      event('subscription.created', { subscriptionId: 'sub_1', status: 'active' })
    )
    assert.deepEqual(created, { type: 'subscription.created' })
    await sync.sync(event('subscription.canceled', { subscriptionId: 'sub_1' }))
    const subscription = await row(TABLES.subscriptions, { subscription_id: 'sub_1' })
    assert.equal(subscription.status, 'canceled')
  })

  test('the first-seen hint skips the insert the claim already made', async ({ assert }) => {
    const { sync, payment } = await setup()
    // the row the claim "inserted" does not exist: sync must not write one
    await sync.sync(event('payment.succeeded', { paymentId: 'pay_1', amount: 1000 }), 'inserted')
    assert.isNull(await payment())
  })

  test('an event billing does not track changes nothing and keeps its type', async ({ assert }) => {
    const { sync, payment } = await setup()
    assert.deepEqual(await sync.sync(event('checkout.completed', { paymentId: 'pay_1' })), {
      type: 'checkout.completed',
    })
    assert.isNull(await payment())
  })

  test('a dispute closed without data or outcome is refused, naming the event', async ({
    assert,
  }) => {
    const { sync } = await setup()
    for (const data of [undefined, { disputeId: 'dp_1', paymentId: 'pay_1' }]) {
      const closed = event('payment.dispute_closed', {})
      closed.data = data
      const error = await sync.sync(closed).catch((caught) => caught)
      assert.instanceOf(error, E_DISPUTE_OUTCOME_MISSING)
      assert.include(error.message, closed.id)
    }
  })
})
