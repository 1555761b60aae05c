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

  test('payment.updated for a payment never seen writes nothing', async ({ assert }) => {
    const { sync, payment } = await setup()
    const outcome = await sync.sync(
      event('payment.updated', { paymentId: 'pay_1', status: 'paid', amount: 1000 })
    )
    assert.deepEqual(outcome, { type: 'payment.updated' })
    assert.isNull(await payment())
  })

  test('a first-seen payment that carries refund lines counts them', async ({ assert }) => {
    const { sync, payment } = await setup()
    await sync.sync(
      event('payment.succeeded', {
        paymentId: 'pay_1',
        amount: 1000,
        refunds: [
          { id: 'rf_1', amount: 300 },
          { id: 'rf_2', amount: 200 },
        ],
      })
    )
    const stored = await payment()
    assert.deepEqual([stored.status, Number(stored.refunded_amount)], ['paid', 500])
  })

  test('an event that changes nothing leaves the rows untouched, updated_at included', async ({
    assert,
  }) => {
    const { db, sync, row } = await setup()
    const paid = { paymentId: 'pay_1', amount: 1000, paidAt: '2030-01-01T00:00:00Z' }
    const opened = { disputeId: 'dp_1', paymentId: 'pay_1', amount: 1000 }
    const active = { subscriptionId: 'sub_1', status: 'active' }
    await sync.sync(event('payment.succeeded', paid))
    await sync.sync(event('payment.disputed', opened))
    await sync.sync(event('subscription.created', active))
    const longAgo = new Date('2001-01-01T00:00:00Z')
    for (const table of [TABLES.payments, TABLES.disputes, TABLES.subscriptions]) {
      await db.connection().from(table).update({ updated_at: longAgo })
    }
    // a warning after the dispute opened (a dispute never moves back), and the same payment
    // and subscription facts under new event ids: nothing to change in any row
    await sync.sync(event('payment.succeeded', paid))
    await sync.sync(event('payment.dispute_warning', opened))
    await sync.sync(event('subscription.created', active))
    for (const [table, where] of [
      [TABLES.payments, { payment_id: 'pay_1' }],
      [TABLES.disputes, { dispute_id: 'dp_1' }],
      [TABLES.subscriptions, { subscription_id: 'sub_1' }],
    ] as const) {
      const stored = await row(table, where)
      assert.equal(new Date(stored.updated_at).getTime(), longAgo.getTime(), table)
    }
  })

  test('a dispute moves its own payment only, and one for a payment never seen is still kept', async ({
    assert,
  }) => {
    const { sync, row } = await setup()
    await sync.sync(event('payment.succeeded', { paymentId: 'pay_0', amount: 500 }))
    await sync.sync(event('payment.succeeded', { paymentId: 'pay_1', amount: 1000 }))
    await sync.sync(
      event('payment.disputed', { disputeId: 'dp_1', paymentId: 'pay_1', amount: 1000 })
    )
    const other = await row(TABLES.payments, { payment_id: 'pay_0' })
    const disputed = await row(TABLES.payments, { payment_id: 'pay_1' })
    assert.deepEqual([other.status, disputed.status], ['paid', 'disputed'])

    const orphan = await sync.sync(
      event('payment.disputed', { disputeId: 'dp_9', paymentId: 'pay_9', amount: 70 })
    )
    assert.deepEqual(orphan, { type: 'payment.disputed' })
    const kept = await row(TABLES.disputes, { dispute_id: 'dp_9' })
    assert.equal(Number(kept.amount), 70)
    assert.isNull(await row(TABLES.payments, { payment_id: 'pay_9' }))
  })

  test('refunds of one payment delivered at once all count (the payment row is locked first)', async ({
    assert,
  }) => {
    const { sync, payment } = await setup()
    await sync.sync(event('payment.succeeded', { paymentId: 'pay_1', amount: 1000 }))
    await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        sync.sync(
          event('payment.updated', {
            paymentId: 'pay_1',
            refunds: [{ id: `rf_${index}`, amount: 100 }],
          })
        )
      )
    )
    const stored = await payment()
    assert.deepEqual([stored.status, Number(stored.refunded_amount)], ['refunded', 1000])
  })
})
