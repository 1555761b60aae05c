/**
 * Dodo Payments, database-free: Standard Webhooks deliveries signed
 * independently (standard_webhooks_signing.ts), each event compared whole
 * with docs/payments.md.
 */
import { test } from '@japa/runner'
import { dodo, KEYS, NOW, signed, toDodo } from './standard_webhooks_signing.ts'

test.group('Payments Dodo Payments: each event, whole', () => {
  const payment = {
    payment_id: 'pay_01',
    total_amount: 1130,
    currency: 'usd',
    customer: { customer_id: 'cus_01' },
    metadata: { externalReference: 'order-1' },
    created_at: '2026-11-20T09:00:00Z',
  }

  test('payment events: succeeded, failed and cancelled', async ({ assert }) => {
    const body = JSON.stringify({ type: 'payment.succeeded', timestamp: NOW, data: payment })
    assert.deepEqual(dodo.parse(signed(KEYS.dodo, body, { id: 'msg_d1' }), 'dodo'), {
      id: 'msg_d1',
      provider: 'dodo',
      raw: JSON.parse(body),
      occurredAt: NOW,
      type: 'payment.succeeded',
      data: {
        paymentId: 'pay_01',
        amount: 1130,
        currency: 'USD',
        status: 'paid',
        paidAt: '2026-11-20T09:00:00.000Z',
        customerId: 'cus_01',
        externalReference: 'order-1',
      },
    })
    for (const type of ['payment.failed', 'payment.cancelled']) {
      const event = toDodo(type, { ...payment, metadata: { external_reference: 'order-x' } })
      assert.deepEqual(
        [event.type, event.data],
        [
          'payment.failed',
          {
            paymentId: 'pay_01',
            amount: 1130,
            currency: 'USD',
            status: 'failed',
            paidAt: null,
            customerId: 'cus_01',
            externalReference: 'order-x',
          },
        ]
      )
    }
    const bare = toDodo('payment.succeeded', { payment_id: 'p', total_amount: 1, metadata: 'x' })
    assert.deepInclude(bare.data as any, {
      currency: undefined,
      customerId: null,
      externalReference: null,
    })
  })

  test('refund.succeeded is payment.updated with that refund', async ({ assert }) => {
    const event = toDodo('refund.succeeded', {
      refund_id: 'ref_01',
      payment_id: 'pay_01',
      amount: 300,
      currency: 'usd',
      metadata: { externalReference: 'order-1' },
    })
    assert.deepEqual(
      [event.type, event.data],
      [
        'payment.updated',
        {
          paymentId: 'pay_01',
          currency: 'USD',
          refunds: [{ id: 'ref_01', amount: 300 }],
          externalReference: 'order-1',
        },
      ]
    )
  })

  test('disputes: a pre-dispute warns, later stages dispute, each outcome closes', async ({
    assert,
  }) => {
    const raw = {
      dispute_id: 'dsp_01',
      payment_id: 'pay_01',
      amount: '1130',
      currency: 'usd',
      remarks: 'fraudulent',
      reason: 'other',
      dispute_stage: 'dispute',
    }
    const data = {
      disputeId: 'dsp_01',
      paymentId: 'pay_01',
      amount: 1130,
      currency: 'USD',
      reason: 'fraudulent',
      actionableUntil: null,
    }
    const warning = toDodo('dispute.opened', { ...raw, dispute_stage: 'pre_dispute' })
    assert.deepEqual([warning.type, warning.data], ['payment.dispute_warning', data])
    const opened = toDodo('dispute.opened', raw)
    assert.deepEqual([opened.type, opened.data], ['payment.disputed', data])
    const outcomes: [string, string][] = [
      ['dispute.won', 'won'],
      ['dispute.lost', 'lost'],
      ['dispute.accepted', 'lost'],
      ['dispute.expired', 'expired'],
      ['dispute.cancelled', 'canceled'],
    ]
    for (const [type, outcome] of outcomes) {
      const closed = toDodo(type, raw)
      assert.deepEqual([closed.type, closed.data], ['payment.dispute_closed', { ...data, outcome }])
    }
    const challenged = toDodo('dispute.challenged', { ...raw, remarks: null, amount: undefined })
    assert.deepEqual(
      [challenged.type, challenged.data],
      ['dispute.challenged', { ...data, amount: undefined, reason: 'other' }]
    )
    assert.throws(() => toDodo('dispute.opened', { payment_id: 'p' }), 'dispute_id is missing')
    assert.throws(
      () => toDodo('dispute.opened', { dispute_id: 'd' }),
      'dispute payment_id is missing'
    )
  })

  test('a delivery missing the id its type needs is refused naming the field', ({ assert }) => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['payment.succeeded', { total_amount: 1 }, 'payment_id is missing'],
      ['refund.succeeded', { refund_id: 'r', amount: 1 }, 'refund payment_id is missing'],
      ['refund.succeeded', { payment_id: 'p', amount: 1 }, 'refund_id is missing'],
      ['subscription.active', {}, 'subscription_id is missing'],
    ]
    for (const [type, data, message] of cases) {
      assert.throws(() => toDodo(type, data), message)
    }
  })

  test('subscription events map as documented; others pass through', async ({ assert }) => {
    const subscription = {
      subscription_id: 'sub_01',
      product_id: 'pdt_01',
      status: 'active',
      customer: { customer_id: 'cus_01' },
      next_billing_date: '2026-12-20T10:00:00Z',
      cancelled_at: '2026-11-21T10:00:00Z',
      metadata: { externalReference: 'order-5' },
    }
    const expected: [string, string][] = [
      ['subscription.active', 'subscription.created'],
      ['subscription.renewed', 'subscription.updated'],
      ['subscription.on_hold', 'subscription.updated'],
      ['subscription.plan_changed', 'subscription.updated'],
      ['subscription.failed', 'subscription.updated'],
      ['subscription.cancelled', 'subscription.canceled'],
      ['subscription.expired', 'subscription.canceled'],
    ]
    for (const [type, canonical] of expected) {
      const event = toDodo(type, subscription)
      assert.deepEqual(
        [event.type, event.data],
        [
          canonical,
          {
            subscriptionId: 'sub_01',
            customerId: 'cus_01',
            status: 'active',
            planId: 'pdt_01',
            currentPeriodEnd: '2026-12-20T10:00:00.000Z',
            canceledAt: '2026-11-21T10:00:00.000Z',
            externalReference: 'order-5',
          },
        ]
      )
    }
    const bare = toDodo('subscription.renewed', { subscription_id: 'sub_02' })
    assert.deepInclude(bare.data as any, { customerId: null, status: undefined })
    for (const type of ['payment.processing', 'License_Key.Created']) {
      const event = toDodo(type, { id: 'x' })
      assert.deepEqual([event.type, event.data], [type.toLowerCase(), { id: 'x' }])
    }
  })
})
