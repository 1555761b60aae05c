import { test } from '@japa/runner'
import {
  createsPayment,
  firstSeenPayment,
  nextPayment,
} from '../../src/payments/billing/payment.ts'
import type { PaymentRow } from '../../src/payments/ledger/tables.ts'
import type { PaymentStatus, PaymentWebhookData, WebhookEvent } from '../../src/payments/types.ts'

/**
 * The payment state machine's transition without a database: the exact
 * changes each event writes to an existing row (the route-level behaviour
 * is in billing.spec.ts and ordering.spec.ts). Database-free, so
 * `npm run mutation -- billing-payment` runs it first.
 */

const NOW = new Date('2030-01-01T12:00:00.000Z')
const T1 = '2030-01-01T00:00:01.000Z'
const T2 = '2030-01-01T00:00:02.000Z'
const ms = (iso: string) => new Date(iso).getTime()

function row(extra: Partial<PaymentRow> = {}): PaymentRow {
  return {
    id: 1,
    provider: 'fake',
    payment_id: 'pay_1',
    status: 'paid',
    amount: 1000,
    currency: 'BRL',
    refunded_amount: 0,
    external_reference: 'ord-1',
    customer_id: 'cus_1',
    paid_at: new Date('2029-12-31T00:00:00.000Z'),
    last_event_at: null,
    ...extra,
  }
}

function event(
  type: string,
  data: Partial<PaymentWebhookData> = {},
  occurredAt?: string
): WebhookEvent<PaymentWebhookData> {
  return {
    id: 'evt_1',
    type,
    data: { paymentId: 'pay_1', ...data },
    raw: {},
    provider: 'fake',
    occurredAt,
  }
}

const next = (
  current: PaymentRow,
  type: string,
  data: Partial<PaymentWebhookData> = {},
  occurredAt?: string,
  refundsTotal?: number
) => nextPayment(current, event(type, data, occurredAt), refundsTotal, NOW)

test.group('nextPayment: status', () => {
  test('payment.succeeded pays a pending or failed payment, never undoes a refund or dispute', ({
    assert,
  }) => {
    const cases: [PaymentStatus, PaymentStatus][] = [
      ['pending', 'paid'],
      ['failed', 'paid'],
      ['paid', 'paid'],
      ['refunded', 'refunded'],
      ['disputed', 'disputed'],
    ]
    for (const [current, expected] of cases) {
      const result = next(row({ status: current }), 'payment.succeeded')
      assert.deepEqual(
        result,
        {
          changes: expected === current ? {} : { status: expected },
          status: expected,
          type: 'payment.succeeded',
        },
        current
      )
    }
  })

  test('payment.failed fails only a pending payment', ({ assert }) => {
    for (const current of ['pending', 'failed', 'paid', 'refunded', 'disputed'] as const) {
      const result = next(row({ status: current }), 'payment.failed')
      const expected = current === 'pending' ? 'failed' : current
      assert.equal(result.status, expected, current)
      assert.deepEqual(result.changes, current === 'pending' ? { status: 'failed' } : {}, current)
    }
  })

  test('payment.refunded refunds from any state, counting the whole charge without a figure', ({
    assert,
  }) => {
    for (const current of ['pending', 'failed', 'paid', 'disputed'] as const) {
      assert.deepEqual(
        next(row({ status: current }), 'payment.refunded'),
        {
          changes: { status: 'refunded', refunded_amount: 1000 },
          status: 'refunded',
          type: 'payment.refunded',
        },
        current
      )
    }
    assert.deepEqual(next(row(), 'payment.refunded', { refundedAmount: 400 }).changes, {
      status: 'refunded',
      refunded_amount: 400,
    })
    // The event's own amount is the whole charge when it carries one
    assert.deepEqual(next(row({ amount: 0 }), 'payment.refunded', { amount: 700 }).changes, {
      status: 'refunded',
      amount: 700,
      refunded_amount: 700,
    })
  })

  test('payment.updated applies a status of equal or higher rank, never leaves disputed', ({
    assert,
  }) => {
    assert.equal(
      next(row({ status: 'pending' }), 'payment.updated', { status: 'paid' }).status,
      'paid'
    )
    assert.deepEqual(
      next(row({ status: 'pending' }), 'payment.updated', { status: 'failed' }).changes,
      { status: 'failed' }
    )
    assert.deepEqual(
      next(row({ status: 'paid' }), 'payment.updated', { status: 'paid' }).changes,
      {}
    )
    assert.equal(
      next(row({ status: 'paid' }), 'payment.updated', { status: 'pending' }).status,
      'paid'
    )
    assert.equal(
      next(row({ status: 'refunded' }), 'payment.updated', { status: 'paid' }).status,
      'refunded'
    )
    assert.equal(
      next(row({ status: 'paid' }), 'payment.updated', { status: 'disputed' }).status,
      'disputed'
    )
    // disputed has the highest rank; the disputed test is what keeps it
    assert.deepEqual(next(row({ status: 'disputed' }), 'payment.updated', { status: 'disputed' }), {
      changes: {},
      status: 'disputed',
      type: 'payment.updated',
    })
    assert.deepEqual(next(row({ status: 'paid' }), 'payment.updated', {}), {
      changes: {},
      status: 'paid',
      type: 'payment.updated',
    })
  })

  test('a late success or failure of a refunded payment is published as itself, not as a second refund', ({
    assert,
  }) => {
    const refunded = row({ status: 'refunded', refunded_amount: 1000 })
    for (const type of ['payment.succeeded', 'payment.failed']) {
      assert.deepEqual(next(refunded, type), { changes: {}, status: 'refunded', type }, type)
    }
  })
})

test.group('nextPayment: event times', () => {
  test('an older event changes no status and no last_event_at, yet fills blanks and raises refunds', ({
    assert,
  }) => {
    const current = row({ status: 'pending', last_event_at: ms(T2), currency: null })
    for (const type of ['payment.succeeded', 'payment.failed', 'payment.refunded']) {
      const result = next(current, type, { currency: 'USD', refundedAmount: 200 }, T1)
      assert.equal(result.status, 'pending', type)
      assert.notProperty(result.changes, 'status', type)
      assert.notProperty(result.changes, 'last_event_at', type)
      assert.equal(result.changes.currency, 'USD', type)
    }
    assert.deepEqual(next(current, 'payment.refunded', { refundedAmount: 200 }, T1).changes, {
      refunded_amount: 200,
    })
    assert.deepEqual(next(current, 'payment.updated', { status: 'paid' }, T1).changes, {})
  })

  test('a newer or equal event applies and moves last_event_at only when it changes', ({
    assert,
  }) => {
    const fromNull = next(row({ status: 'pending' }), 'payment.updated', { status: 'paid' }, T2)
    assert.deepEqual(fromNull.changes, { status: 'paid', last_event_at: ms(T2) })

    const later = next(row({ last_event_at: ms(T1) }), 'payment.updated', { status: 'paid' }, T2)
    assert.deepEqual(later.changes, { last_event_at: ms(T2) })

    // The database may hand the epoch back as a string: the same instant is no change
    const same = next(
      row({ last_event_at: String(ms(T2)) }),
      'payment.updated',
      { status: 'paid' },
      T2
    )
    assert.deepEqual(same.changes, {})

    const sameFailed = next(
      row({ status: 'pending', last_event_at: ms(T2) }),
      'payment.failed',
      {},
      T2
    )
    assert.deepEqual(sameFailed.changes, { status: 'failed' })

    // No time on the event: the row's time stays
    const untimed = next(row({ status: 'pending', last_event_at: ms(T1) }), 'payment.failed')
    assert.deepEqual(untimed.changes, { status: 'failed' })
  })

  test('an update without a status moves no time and no status', ({ assert }) => {
    const result = next(
      row({ last_event_at: ms(T1) }),
      'payment.updated',
      { refundedAmount: 100 },
      T2
    )
    assert.deepEqual(result.changes, { refunded_amount: 100 })
  })
})

test.group('nextPayment: blanks and refunds', () => {
  test('fields fill only what the row lacks', ({ assert }) => {
    const blank = row({
      amount: 0,
      currency: null,
      customer_id: null,
      external_reference: null,
    })
    const data = { amount: 500, currency: 'USD', customerId: 'cus_2', externalReference: 'ord-2' }
    assert.deepEqual(next(blank, 'payment.updated', data).changes, {
      amount: 500,
      currency: 'USD',
      customer_id: 'cus_2',
      external_reference: 'ord-2',
    })
    assert.deepEqual(next(row(), 'payment.updated', data).changes, {})
    assert.deepEqual(next(blank, 'payment.updated', {}).changes, {})
    // An amount of zero delivered is still an amount
    assert.deepEqual(
      next(row({ amount: '0' as unknown as number }), 'payment.updated', { amount: 0 }).changes,
      {
        amount: 0,
      }
    )
  })

  test('payment.succeeded dates paid_at from the gateway, then the event, then now; once', ({
    assert,
  }) => {
    const unpaid = row({ status: 'pending', paid_at: null })
    assert.deepEqual(
      next(unpaid, 'payment.succeeded', { paidAt: T1 }, T2).changes.paid_at,
      new Date(T1)
    )
    assert.deepEqual(
      next(unpaid, 'payment.succeeded', { paidAt: 'not a date' }, T2).changes.paid_at,
      new Date(T2)
    )
    assert.deepEqual(next(unpaid, 'payment.succeeded').changes.paid_at, NOW)
    assert.notProperty(
      next(row({ status: 'pending' }), 'payment.succeeded', { paidAt: T1 }).changes,
      'paid_at'
    )
    assert.notProperty(next(unpaid, 'payment.updated', { paidAt: T1 }).changes, 'paid_at')
  })

  test('refunds keep the largest total reported; an update reaching the amount becomes payment.refunded', ({
    assert,
  }) => {
    const partly = row({ refunded_amount: 300 })
    assert.deepEqual(next(partly, 'payment.updated', { refundedAmount: 200 }).changes, {})
    assert.deepEqual(next(partly, 'payment.updated', {}, undefined, 100).changes, {})
    assert.deepEqual(next(partly, 'payment.updated', {}, undefined, 500), {
      changes: { refunded_amount: 500 },
      status: 'paid',
      type: 'payment.updated',
    })
    assert.deepEqual(next(partly, 'payment.updated', { refundedAmount: 1000 }), {
      changes: { refunded_amount: 1000, status: 'refunded' },
      status: 'refunded',
      type: 'payment.refunded',
    })
    assert.deepEqual(next(partly, 'payment.updated', {}, undefined, 1200).type, 'payment.refunded')
    // refundedAmount of another event type is not a refund total
    assert.deepEqual(next(partly, 'payment.succeeded', { refundedAmount: 900 }).changes, {})
    // Already whole: a plain update still reads as the refund it is
    assert.deepEqual(next(row({ refunded_amount: 1000 }), 'payment.updated', {}), {
      changes: { status: 'refunded' },
      status: 'refunded',
      type: 'payment.refunded',
    })
  })

  test('a disputed payment or one of amount zero is never turned into a refund by an update', ({
    assert,
  }) => {
    assert.deepEqual(
      next(row({ status: 'disputed' }), 'payment.updated', { refundedAmount: 1000 }),
      {
        changes: { refunded_amount: 1000 },
        status: 'disputed',
        type: 'payment.updated',
      }
    )
    assert.deepEqual(next(row({ amount: 0 }), 'payment.updated', {}), {
      changes: {},
      status: 'paid',
      type: 'payment.updated',
    })
    // The event's amount counts over the row's
    assert.deepEqual(
      next(row({ refunded_amount: 600 }), 'payment.updated', { amount: 600 }).type,
      'payment.refunded'
    )
  })
})

test.group('firstSeenPayment', () => {
  test('a success, a failure or a refund creates the row; other types create none', ({
    assert,
  }) => {
    assert.deepEqual(
      ['payment.succeeded', 'payment.failed', 'payment.refunded', 'payment.updated'].map(
        createsPayment
      ),
      [true, true, true, false]
    )
    assert.isNull(firstSeenPayment(event('payment.updated', { status: 'paid' }), NOW))
    assert.isNull(firstSeenPayment(event('payment.disputed'), NOW))
  })

  test('the row of a first-seen success carries every field and dates paid_at', ({ assert }) => {
    const data = {
      amount: 1000,
      currency: 'BRL',
      customerId: 'cus_1',
      externalReference: 'ord-1',
      paidAt: T1,
    }
    assert.deepEqual(firstSeenPayment(event('payment.succeeded', data, T2), NOW), {
      provider: 'fake',
      payment_id: 'pay_1',
      status: 'paid',
      amount: 1000,
      currency: 'BRL',
      refunded_amount: null,
      customer_id: 'cus_1',
      paid_at: new Date(T1),
      external_reference: 'ord-1',
      last_event_at: ms(T2),
    })
    assert.deepEqual(
      firstSeenPayment(event('payment.succeeded', {}, T2), NOW)?.paid_at,
      new Date(T2)
    )
    assert.deepEqual(firstSeenPayment(event('payment.succeeded'), NOW), {
      provider: 'fake',
      payment_id: 'pay_1',
      status: 'paid',
      amount: 0,
      currency: null,
      refunded_amount: null,
      customer_id: null,
      paid_at: NOW,
      external_reference: null,
      last_event_at: null,
    })
  })

  test('a first-seen failure has no paid_at; a first-seen refund counts the whole charge', ({
    assert,
  }) => {
    const failed = firstSeenPayment(event('payment.failed', { amount: 500 }), NOW)
    assert.deepEqual(
      [failed?.status, failed?.paid_at, failed?.refunded_amount],
      ['failed', null, null]
    )
    const whole = firstSeenPayment(event('payment.refunded', { amount: 500 }), NOW)
    assert.deepEqual(
      [whole?.status, whole?.paid_at, whole?.refunded_amount],
      ['refunded', null, 500]
    )
    const partial = firstSeenPayment(
      event('payment.refunded', { amount: 500, refundedAmount: 200 }),
      NOW
    )
    assert.equal(partial?.refunded_amount, 200)
  })
})
