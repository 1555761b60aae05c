/**
 * Polar, database-free: Standard Webhooks deliveries signed independently
 * (standard_webhooks_signing.ts), each event compared whole with docs/payments.md.
 */
import { test } from '@japa/runner'
import { KEYS, NOW, polar, signed, toPolar } from './standard_webhooks_signing.ts'

test.group('Payments Polar: each event, whole', () => {
  test('order.paid is payment.succeeded; the webhook-id is the event id', async ({ assert }) => {
    const order = {
      id: 'ord_01',
      total_amount: 1130,
      amount: 1000,
      currency: 'usd',
      customer_id: 'cus_01',
      metadata: { externalReference: 'order-1' },
      created_at: '2026-11-20T09:00:00Z',
      modified_at: '2026-11-20T09:30:00Z',
    }
    const body = JSON.stringify({ type: 'order.paid', timestamp: NOW, data: order })
    assert.deepEqual(polar.parse(signed(KEYS.polar, body, { id: 'msg_77' }), 'polar'), {
      id: 'msg_77',
      provider: 'polar',
      raw: JSON.parse(body),
      occurredAt: NOW,
      type: 'payment.succeeded',
      data: {
        paymentId: 'ord_01',
        amount: 1130,
        currency: 'USD',
        status: 'paid',
        paidAt: '2026-11-20T09:30:00.000Z',
        customerId: 'cus_01',
        externalReference: 'order-1',
      },
    })
    const fallback = toPolar('order.paid', {
      ...order,
      total_amount: undefined,
      modified_at: null,
      currency: null,
      metadata: 'none',
      customer: { external_id: 'ext-1' },
    })
    assert.deepInclude(fallback.data as any, {
      amount: 1000,
      paidAt: '2026-11-20T09:00:00.000Z',
      currency: undefined,
      externalReference: 'ext-1',
    })
    const snake = toPolar('order.paid', { ...order, metadata: { external_reference: 'order-2' } })
    assert.equal((snake.data as any).externalReference, 'order-2')
  })

  test('order.refunded: whole is payment.refunded, part is payment.updated', async ({ assert }) => {
    const order = { id: 'ord_02', total_amount: 1130, currency: 'usd', status: 'paid' }
    const cases: [Record<string, unknown>, string, number][] = [
      [{ refunded_amount: 1130 }, 'payment.refunded', 1130],
      [{ refunded_amount: 300, status: 'refunded' }, 'payment.refunded', 300],
      [{ refunded_amount: 300, status: 'partially_refunded' }, 'payment.updated', 300],
      [{ refunded_amount: 1129 }, 'payment.updated', 1129],
      [{}, 'payment.updated', 0],
    ]
    for (const [extra, type, refunded] of cases) {
      const event = toPolar('order.refunded', { ...order, ...extra })
      assert.equal(event.type, type, JSON.stringify(extra))
      assert.deepEqual(event.data, {
        paymentId: 'ord_02',
        amount: 1130,
        currency: 'USD',
        refundedAmount: refunded,
        externalReference: null,
      })
    }
    const byAmount = toPolar('order.refunded', { id: 'o', amount: 500, refunded_amount: 499 })
    assert.deepInclude(byAmount.data as any, { amount: 500, refundedAmount: 499 })
  })

  test('a succeeded refund is payment.updated with that refund; others pass through', async ({
    assert,
  }) => {
    const refund = {
      id: 'ref_01',
      order_id: 'ord_03',
      amount: 300,
      currency: 'eur',
      status: 'succeeded',
      metadata: { externalReference: 'order-3' },
    }
    for (const type of ['refund.created', 'refund.updated']) {
      const event = toPolar(type, refund)
      assert.deepEqual(
        [event.type, event.data],
        [
          'payment.updated',
          {
            paymentId: 'ord_03',
            currency: 'EUR',
            refunds: [{ id: 'ref_01', amount: 300 }],
            externalReference: 'order-3',
          },
        ]
      )
    }
    const pending = toPolar('refund.created', { ...refund, status: 'pending' })
    assert.deepEqual(
      [pending.type, pending.data],
      ['refund.created', { ...refund, status: 'pending' }]
    )
  })

  test('subscription events: revoked ends it, canceled only schedules the end', async ({
    assert,
  }) => {
    const subscription = {
      id: 'sub_01',
      status: 'active',
      customer_id: 'cus_01',
      product_id: 'prod_01',
      current_period_end: '2026-12-20T10:00:00Z',
      canceled_at: '2026-11-21T10:00:00Z',
      ended_at: '2026-11-22T10:00:00Z',
      metadata: { externalReference: 'order-4' },
    }
    const expected: [string, string][] = [
      ['subscription.created', 'subscription.created'],
      ['subscription.updated', 'subscription.updated'],
      ['subscription.active', 'subscription.updated'],
      ['subscription.uncanceled', 'subscription.updated'],
      ['subscription.past_due', 'subscription.updated'],
      ['subscription.canceled', 'subscription.updated'],
      ['subscription.revoked', 'subscription.canceled'],
    ]
    for (const [type, canonical] of expected) {
      const event = toPolar(type, subscription)
      assert.deepEqual(
        [event.type, event.data],
        [
          canonical,
          {
            subscriptionId: 'sub_01',
            customerId: 'cus_01',
            status: 'active',
            planId: 'prod_01',
            currentPeriodEnd: '2026-12-20T10:00:00.000Z',
            canceledAt: '2026-11-21T10:00:00.000Z',
            externalReference: 'order-4',
          },
        ]
      )
    }
    const ended = toPolar('subscription.revoked', {
      id: 'sub_02',
      ended_at: '2026-11-22T10:00:00Z',
    })
    assert.deepInclude(ended.data as any, {
      canceledAt: '2026-11-22T10:00:00.000Z',
      status: undefined,
    })
    const passthrough = toPolar('Checkout.Created', { id: 'chk_1' })
    assert.deepEqual([passthrough.type, passthrough.data], ['checkout.created', { id: 'chk_1' }])
  })

  test('a delivery missing the id its type needs is refused naming the field', ({ assert }) => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['order.refunded', { total_amount: 1 }, 'order id is missing'],
      ['refund.created', { id: 'r', amount: 1, status: 'succeeded' }, 'refund order_id is missing'],
      ['refund.updated', { order_id: 'o', amount: 1, status: 'succeeded' }, 'refund id is missing'],
      ['subscription.updated', {}, 'subscription id is missing'],
    ]
    for (const [type, data, message] of cases) {
      assert.throws(() => toPolar(type, data), message)
    }
  })
})
