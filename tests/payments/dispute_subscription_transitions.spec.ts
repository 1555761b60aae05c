import { test } from '@japa/runner'
import {
  disputeStatus,
  firstDispute,
  nextDispute,
  paymentAfterDispute,
} from '../../src/payments/billing/dispute.ts'
import { eventTime, isOlder, newest, toDate } from '../../src/payments/billing/event_time.ts'
import { firstSubscription, nextSubscription } from '../../src/payments/billing/subscription.ts'
import type { PaymentRow } from '../../src/payments/ledger/tables.ts'
import type {
  DisputeWebhookData,
  PaymentStatus,
  SubscriptionWebhookData,
  WebhookEvent,
} from '../../src/payments/types.ts'

/**
 * The dispute and subscription state machines and the event-time rules
 * without a database: the exact rows and changes each event produces (the
 * route-level behaviour is in billing.spec.ts and ordering.spec.ts).
 */

const NOW = new Date('2030-01-01T12:00:00.000Z')
const T1 = '2030-01-01T00:00:01.000Z'
const T2 = '2030-01-01T00:00:02.000Z'
const ms = (iso: string) => new Date(iso).getTime()

function event<Data>(type: string, data: Data, occurredAt?: string): WebhookEvent<Data> {
  return { id: 'evt_1', type, data, raw: {}, provider: 'fake', occurredAt }
}
const dispute = (type: string, extra: Partial<DisputeWebhookData> = {}, occurredAt?: string) =>
  event<DisputeWebhookData>(type, { disputeId: 'dp_1', paymentId: 'pay_1', ...extra }, occurredAt)
const subscription = (
  type: string,
  extra: Partial<SubscriptionWebhookData> = {},
  occurredAt?: string
) => event<SubscriptionWebhookData>(type, { subscriptionId: 'sub_1', ...extra }, occurredAt)

function payment(status: PaymentStatus, lastEventAt: number | string | null = null): PaymentRow {
  return {
    id: 1,
    provider: 'fake',
    payment_id: 'pay_1',
    status,
    amount: 1000,
    currency: 'BRL',
    refunded_amount: 0,
    customer_id: null,
    paid_at: null,
    last_event_at: lastEventAt,
  }
}

test.group('Event times', () => {
  test('toDate reads a date, null when absent or unreadable; eventTime is its epoch', ({
    assert,
  }) => {
    assert.deepEqual(toDate(T1), new Date(T1))
    assert.isNull(toDate(''))
    assert.isNull(toDate(null))
    assert.isNull(toDate(undefined))
    assert.isNull(toDate('not a date'))
    assert.equal(eventTime(dispute('payment.disputed', {}, T1)), ms(T1))
    assert.isNull(eventTime(dispute('payment.disputed')))
    assert.isNull(eventTime(dispute('payment.disputed', {}, 'garbage')))
  })

  test('isOlder needs both times and is strict; newest keeps the later one', ({ assert }) => {
    assert.isTrue(isOlder(1, 2))
    assert.isTrue(isOlder(1, '2'))
    assert.isFalse(isOlder(2, 2))
    assert.isFalse(isOlder(3, '2'))
    assert.isFalse(isOlder(null, 2))
    assert.isFalse(isOlder(1, null))
    assert.isFalse(isOlder(1, undefined))
    assert.strictEqual(newest(5, null), 5)
    assert.strictEqual(newest(null, undefined), null)
    assert.strictEqual(newest(null, '7'), 7)
    assert.strictEqual(newest(5, '7'), 7)
    assert.strictEqual(newest(9, 7), 9)
  })
})

test.group('Dispute row', () => {
  test('a first-seen dispute carries its fields, status and outcome, null where absent', ({
    assert,
  }) => {
    assert.deepEqual(
      firstDispute(
        dispute('payment.dispute_closed', {
          amount: 600,
          currency: 'USD',
          reason: 'fraudulent',
          actionableUntil: T2,
          outcome: 'lost',
        })
      ),
      {
        provider: 'fake',
        dispute_id: 'dp_1',
        payment_id: 'pay_1',
        amount: 600,
        currency: 'USD',
        reason: 'fraudulent',
        actionable_until: new Date(T2),
        status: 'closed',
        outcome: 'lost',
      }
    )
    assert.deepEqual(firstDispute(dispute('payment.dispute_warning')), {
      provider: 'fake',
      dispute_id: 'dp_1',
      payment_id: 'pay_1',
      amount: null,
      currency: null,
      reason: null,
      actionable_until: null,
      status: 'warning',
      outcome: null,
    })
    assert.equal(disputeStatus('payment.disputed'), 'open')
  })

  test('a dispute never moves back; fields replace only when carried; the outcome stays', ({
    assert,
  }) => {
    assert.isNull(nextDispute({ status: 'open' }, dispute('payment.dispute_warning')))
    assert.isNull(nextDispute({ status: 'closed' }, dispute('payment.disputed')))
    assert.deepEqual(nextDispute({ status: 'open', outcome: null }, dispute('payment.disputed')), {
      payment_id: 'pay_1',
      status: 'open',
      outcome: null,
    })
    assert.deepEqual(
      nextDispute(
        { status: 'warning', outcome: null },
        dispute('payment.disputed', { reason: 'fraudulent', amount: 0 })
      ),
      { payment_id: 'pay_1', amount: 0, reason: 'fraudulent', status: 'open', outcome: null }
    )
    assert.deepEqual(
      nextDispute({ status: 'closed', outcome: 'won' }, dispute('payment.dispute_closed')),
      { payment_id: 'pay_1', status: 'closed', outcome: 'won' }
    )
    assert.deepEqual(
      nextDispute(
        { status: 'closed', outcome: 'won' },
        dispute('payment.dispute_closed', { outcome: 'lost' })
      ),
      { payment_id: 'pay_1', status: 'closed', outcome: 'lost' }
    )
  })
})

test.group('Payment after a dispute', () => {
  test('opened disputes the payment; closed as won restores paid; closed otherwise keeps it disputed', ({
    assert,
  }) => {
    assert.deepEqual(paymentAfterDispute(payment('paid'), dispute('payment.disputed')), {
      status: 'disputed',
    })
    assert.isNull(paymentAfterDispute(payment('disputed'), dispute('payment.disputed')))
    assert.deepEqual(
      paymentAfterDispute(
        payment('disputed'),
        dispute('payment.dispute_closed', { outcome: 'won' })
      ),
      { status: 'paid' }
    )
    // A win restores only a disputed payment
    assert.isNull(
      paymentAfterDispute(
        payment('refunded'),
        dispute('payment.dispute_closed', { outcome: 'won' })
      )
    )
    assert.deepEqual(
      paymentAfterDispute(payment('paid'), dispute('payment.dispute_closed', { outcome: 'lost' })),
      { status: 'disputed' }
    )
    assert.isNull(paymentAfterDispute(payment('paid'), dispute('payment.dispute_warning')))
  })

  test('an opened dispute disputes the payment even when its data carries an outcome', ({
    assert,
  }) => {
    // The type decides: only a close reads the outcome (a custom driver may pass one along)
    assert.deepEqual(
      paymentAfterDispute(payment('paid'), dispute('payment.disputed', { outcome: 'won' })),
      { status: 'disputed' }
    )
  })

  test('an older dispute event changes nothing; a newer one moves last_event_at even when the status stays', ({
    assert,
  }) => {
    assert.isNull(paymentAfterDispute(payment('paid', ms(T2)), dispute('payment.disputed', {}, T1)))
    assert.deepEqual(
      paymentAfterDispute(payment('disputed', ms(T1)), dispute('payment.disputed', {}, T2)),
      { last_event_at: ms(T2) }
    )
    assert.deepEqual(
      paymentAfterDispute(payment('paid', String(ms(T1))), dispute('payment.disputed', {}, T1)),
      { status: 'disputed' }
    )
    assert.deepEqual(paymentAfterDispute(payment('paid'), dispute('payment.disputed', {}, T1)), {
      status: 'disputed',
      last_event_at: ms(T1),
    })
    assert.isNull(
      paymentAfterDispute(payment('disputed', ms(T2)), dispute('payment.dispute_warning', {}, T2))
    )
  })
})

test.group('Subscription row', () => {
  test('a first-seen subscription: canceled, its own status, or active', ({ assert }) => {
    assert.deepEqual(
      firstSubscription(
        subscription(
          'subscription.created',
          {
            status: 'trialing',
            customerId: 'cus_1',
            planId: 'plan_1',
            currentPeriodEnd: T2,
            externalReference: 'ord-1',
          },
          T1
        ),
        NOW
      ),
      {
        provider: 'fake',
        subscription_id: 'sub_1',
        status: 'trialing',
        customer_id: 'cus_1',
        plan_id: 'plan_1',
        current_period_end: new Date(T2),
        canceled_at: null,
        external_reference: 'ord-1',
        last_event_at: ms(T1),
      }
    )
    const created = firstSubscription(subscription('subscription.updated'), NOW)
    assert.deepEqual(
      [created.status, created.last_event_at, created.plan_id],
      ['active', null, null]
    )
    const canceled = firstSubscription(
      subscription('subscription.canceled', { status: 'active' }),
      NOW
    )
    assert.deepEqual([canceled.status, canceled.canceled_at], ['canceled', NOW])
  })

  test('canceled_at: the gateway date, then the event time, then now', ({ assert }) => {
    const at = (extra: Partial<SubscriptionWebhookData>, occurredAt?: string) =>
      firstSubscription(subscription('subscription.canceled', extra, occurredAt), NOW).canceled_at
    assert.deepEqual(at({ canceledAt: T1 }, T2), new Date(T1))
    assert.deepEqual(at({}, T2), new Date(T2))
    assert.deepEqual(at({}), NOW)
  })

  test('canceled is final; a creation or an older event only fills blanks', ({ assert }) => {
    const row = {
      status: 'active',
      customer_id: 'cus_1',
      plan_id: null,
      current_period_end: undefined,
      canceled_at: null,
      external_reference: null,
      last_event_at: ms(T2),
    }
    assert.isNull(
      nextSubscription({ ...row, status: 'canceled' }, subscription('subscription.updated'), NOW)
    )
    const data = {
      status: 'past_due' as const,
      customerId: 'cus_2',
      planId: 'plan_2',
      currentPeriodEnd: T2,
    }
    const blanks = { plan_id: 'plan_2', current_period_end: new Date(T2) }
    assert.deepEqual(
      nextSubscription(row, subscription('subscription.created', data, T2), NOW),
      blanks
    )
    assert.deepEqual(
      nextSubscription(row, subscription('subscription.updated', data, T1), NOW),
      blanks
    )
    assert.isNull(
      nextSubscription(row, subscription('subscription.updated', { customerId: 'cus_2' }, T1), NOW)
    )
    // An older cancel still cancels
    assert.deepEqual(nextSubscription(row, subscription('subscription.canceled', {}, T1), NOW), {
      canceled_at: new Date(T1),
      status: 'canceled',
      last_event_at: ms(T2),
    })
  })

  test('a newer update writes what it carries, its status and the newest time', ({ assert }) => {
    const row = { status: 'active', customer_id: 'cus_1', plan_id: 'plan_1', last_event_at: ms(T1) }
    assert.deepEqual(
      nextSubscription(
        row,
        subscription('subscription.updated', { status: 'past_due', planId: 'plan_2' }, T2),
        NOW
      ),
      { plan_id: 'plan_2', status: 'past_due', last_event_at: ms(T2) }
    )
    assert.deepEqual(
      nextSubscription(row, subscription('subscription.updated', { planId: 'plan_3' }), NOW),
      { plan_id: 'plan_3', last_event_at: ms(T1) }
    )
    assert.deepEqual(
      nextSubscription(
        { ...row, last_event_at: null },
        subscription('subscription.updated', { status: 'paused' }),
        NOW
      ),
      { status: 'paused' }
    )
  })
})
