/**
 * Razorpay, database-free: deliveries signed with the documented formula
 * written out here (`X-Razorpay-Signature`, the hex HMAC-SHA256 of the raw
 * body), never with Atrium's own signer, and each event compared whole with
 * docs/payments.md.
 */
import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { RazorpayDriver } from '../../src/payments/drivers/razorpay.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'

const RAZORPAY_SECRET = 'razorpay-independent-secret'

const request = (body: string, headers: Record<string, string>): WebhookRequest => ({
  rawBody: Buffer.from(body),
  headers,
  query: {},
})
const razorpaySigned = (body: string, secret = RAZORPAY_SECRET) =>
  request(body, {
    'x-razorpay-signature': createHmac('sha256', secret).update(body).digest('hex'),
  })
const razorpayDriver = new RazorpayDriver({ webhookSecret: RAZORPAY_SECRET })

const razorpay = (event: string, payload: unknown, createdAt: unknown = 1_763_632_800) =>
  razorpayDriver.parse(
    razorpaySigned(JSON.stringify({ entity: 'event', event, payload, created_at: createdAt })),
    'razorpay'
  )
/** 2025-11-20T10:00:00Z, as Razorpay sends times */
const UNIX = 1_763_632_800
const AT = '2025-11-20T10:00:00.000Z'

const payment = {
  id: 'pay_01',
  amount: 113000,
  currency: 'inr',
  customer_id: 'cust_01',
  notes: { externalReference: 'order-1' },
  receipt: 'receipt-1',
  created_at: UNIX - 60,
}

test.group('Payments Razorpay: each event, whole', () => {
  test('a captured payment is payment.succeeded; the id comes from the signed body', async ({
    assert,
  }) => {
    const body = JSON.stringify({
      event: 'payment.captured',
      payload: { payment: { entity: payment } },
      created_at: UNIX,
    })
    assert.deepEqual(razorpayDriver.parse(razorpaySigned(body), 'rzp'), {
      id: `razorpay:payment.captured:pay_01:${UNIX}`,
      provider: 'rzp',
      raw: JSON.parse(body),
      occurredAt: AT,
      type: 'payment.succeeded',
      data: {
        paymentId: 'pay_01',
        amount: 113000,
        currency: 'INR',
        customerId: 'cust_01',
        externalReference: 'order-1',
        status: 'paid',
        paidAt: '2025-11-20T09:59:00.000Z',
      },
    })
    const failed = razorpay(
      'payment.failed',
      { payment: { entity: { ...payment, notes: [] } } },
      null
    )
    assert.deepEqual(
      [failed.id, failed.occurredAt, failed.type, failed.data],
      [
        'razorpay:payment.failed:pay_01:-',
        null,
        'payment.failed',
        {
          paymentId: 'pay_01',
          amount: 113000,
          currency: 'INR',
          customerId: 'cust_01',
          externalReference: 'receipt-1',
          status: 'failed',
          paidAt: null,
        },
      ]
    )
    const snake = razorpay('payment.captured', {
      payment: { entity: { id: 'pay_02', amount: 1, notes: { external_reference: 'order-2' } } },
    })
    assert.deepInclude(snake.data as any, { externalReference: 'order-2', currency: undefined })
  })

  test('a processed refund: payment.updated, or payment.refunded when the payment is full', async ({
    assert,
  }) => {
    const refund = {
      id: 'rfnd_01',
      payment_id: 'pay_01',
      amount: 30000,
      currency: 'inr',
      notes: { externalReference: 'order-r' },
    }
    const partial = razorpay('refund.processed', {
      refund: { entity: refund },
      payment: { entity: { ...payment, refund_status: 'partial' } },
    })
    const data = {
      paymentId: 'pay_01',
      currency: 'INR',
      externalReference: 'order-1',
      refunds: [{ id: 'rfnd_01', amount: 30000 }],
    }
    assert.deepEqual(
      [partial.id, partial.type, partial.data],
      [`razorpay:refund.processed:rfnd_01:${UNIX}`, 'payment.updated', data]
    )
    const full = razorpay('refund.processed', {
      refund: { entity: refund },
      payment: { entity: { ...payment, refund_status: 'full', amount_refunded: 113000 } },
    })
    assert.deepEqual(
      [full.type, full.data],
      ['payment.refunded', { ...data, amount: 113000, refundedAmount: 113000 }]
    )
    const noTotal = razorpay('refund.processed', {
      refund: { entity: refund },
      payment: { entity: { ...payment, refund_status: 'full' } },
    })
    assert.equal((noTotal.data as any).refundedAmount, 113000)
    const alone = razorpay('refund.processed', { refund: { entity: refund } })
    assert.deepEqual(
      [alone.type, alone.data],
      ['payment.updated', { ...data, externalReference: 'order-r' }]
    )
    const byPayment = razorpay('refund.processed', {
      refund: { entity: { ...refund, payment_id: undefined, currency: undefined } },
      payment: { entity: payment },
    })
    assert.deepInclude(byPayment.data as any, { paymentId: 'pay_01', currency: undefined })
  })

  test('disputes: retrieval and fraud warn, other phases dispute, outcomes close', async ({
    assert,
  }) => {
    const dispute = {
      id: 'disp_01',
      payment_id: 'pay_01',
      amount: 113000,
      currency: 'inr',
      reason_code: 'chargeback',
      respond_by: UNIX + 86_400,
      phase: 'chargeback',
    }
    const data = {
      disputeId: 'disp_01',
      paymentId: 'pay_01',
      amount: 113000,
      currency: 'INR',
      reason: 'chargeback',
      actionableUntil: '2025-11-21T10:00:00.000Z',
    }
    const phases: [string, string][] = [
      ['retrieval', 'payment.dispute_warning'],
      ['fraud', 'payment.dispute_warning'],
      ['chargeback', 'payment.disputed'],
      ['pre_arbitration', 'payment.disputed'],
    ]
    for (const [phase, type] of phases) {
      const event = razorpay('payment.dispute.created', {
        dispute: { entity: { ...dispute, phase } },
      })
      assert.deepEqual(
        [event.id, event.type, event.data],
        [`razorpay:payment.dispute.created:disp_01:${UNIX}`, type, data]
      )
    }
    const outcomes: [string, string][] = [
      ['payment.dispute.won', 'won'],
      ['payment.dispute.lost', 'lost'],
      ['payment.dispute.closed', 'canceled'],
    ]
    for (const [name, outcome] of outcomes) {
      const event = razorpay(name, { dispute: { entity: { ...dispute, phase: 'fraud' } } })
      assert.deepEqual([event.type, event.data], ['payment.dispute_closed', { ...data, outcome }])
    }
    const byPayment = razorpay('payment.dispute.created', {
      dispute: { entity: { ...dispute, payment_id: undefined, currency: null } },
      payment: { entity: { id: 'pay_09' } },
    })
    assert.deepInclude(byPayment.data as any, { paymentId: 'pay_09', currency: undefined })
  })

  test('subscription events map as documented; others pass through', async ({ assert }) => {
    const subscription = {
      id: 'sub_01',
      customer_id: 'cust_01',
      status: 'active',
      plan_id: 'plan_01',
      current_end: UNIX + 86_400,
      ended_at: UNIX,
      notes: { externalReference: 'order-s' },
    }
    const expected: [string, string][] = [
      ['subscription.authenticated', 'subscription.created'],
      ['subscription.activated', 'subscription.updated'],
      ['subscription.charged', 'subscription.updated'],
      ['subscription.updated', 'subscription.updated'],
      ['subscription.paused', 'subscription.updated'],
      ['subscription.resumed', 'subscription.updated'],
      ['subscription.pending', 'subscription.updated'],
      ['subscription.halted', 'subscription.updated'],
      ['subscription.cancelled', 'subscription.canceled'],
      ['subscription.completed', 'subscription.canceled'],
    ]
    for (const [name, type] of expected) {
      const event = razorpay(name, { subscription: { entity: subscription } })
      assert.deepEqual(
        [event.id, event.type, event.data],
        [
          `razorpay:${name}:sub_01:${UNIX}`,
          type,
          {
            subscriptionId: 'sub_01',
            customerId: 'cust_01',
            status: 'active',
            planId: 'plan_01',
            currentPeriodEnd: '2025-11-21T10:00:00.000Z',
            canceledAt: AT,
            externalReference: 'order-s',
          },
        ]
      )
    }
    const bare = razorpay('subscription.charged', { subscription: { entity: { id: 'sub_02' } } })
    assert.deepInclude(bare.data as any, { status: undefined, currentPeriodEnd: null })
    const authorized = razorpay('Payment.Authorized', { payment: { entity: payment } })
    assert.deepEqual(
      [authorized.id, authorized.type, authorized.data],
      [
        `razorpay:Payment.Authorized:pay_01:${UNIX}`,
        'payment.authorized',
        { payment: { entity: payment } },
      ]
    )
    for (const payload of [{ order: {} }, {}]) {
      const empty = razorpay('order.paid', payload)
      assert.equal(empty.id, `razorpay:order.paid:-:${UNIX}`)
    }
  })

  test('a malformed delivery is refused by name', async ({ assert }) => {
    const good = JSON.stringify({
      event: 'payment.captured',
      payload: { payment: { entity: payment } },
    })
    assert.throws(
      () => new RazorpayDriver({}).parse(razorpaySigned(good), 'rzp'),
      'razorpay has no webhookSecret'
    )
    const cases: [WebhookRequest, string][] = [
      [request(good, {}), 'missing X-Razorpay-Signature header'],
      [razorpaySigned(good, 'other'), 'X-Razorpay-Signature does not match the body'],
      [razorpaySigned('{"event":"payment.captured"}'), 'Razorpay event has no payload'],
      [razorpaySigned('{"event":"x","payload":[]}'), 'Razorpay event has no payload'],
      [razorpaySigned('{"payload":{}}'), 'event is missing'],
    ]
    for (const [name, payload, message] of [
      ['payment.captured', { payment: {} }, 'Razorpay event has no payload.payment.entity'],
      [
        'refund.processed',
        { payment: { entity: payment } },
        'Razorpay event has no payload.refund.entity',
      ],
      ['payment.dispute.won', {}, 'Razorpay event has no payload.dispute.entity'],
      ['subscription.halted', {}, 'Razorpay event has no payload.subscription.entity'],
      [
        'refund.processed',
        { refund: { entity: { id: 'r', amount: 1 } } },
        'refund payment_id is missing',
      ],
      [
        'payment.dispute.created',
        { dispute: { entity: { id: 'd', amount: 1 } } },
        'dispute payment_id is missing',
      ],
      [
        'payment.dispute.created',
        { dispute: { entity: { id: 'd', amount: 1 } }, payment: {} },
        'dispute payment_id is missing',
      ],
      ['payment.captured', { payment: { entity: { amount: 1 } } }, 'payment id is missing'],
      [
        'refund.processed',
        { refund: { entity: { payment_id: 'pay_01', amount: 1 } } },
        'refund id is missing',
      ],
      [
        'payment.dispute.lost',
        { dispute: { entity: { payment_id: 'pay_01', amount: 1 } } },
        'dispute id is missing',
      ],
      ['subscription.halted', { subscription: { entity: {} } }, 'subscription id is missing'],
    ] as const) {
      cases.push([razorpaySigned(JSON.stringify({ event: name, payload })), message])
    }
    for (const [delivery, message] of cases) {
      assert.throws(() => razorpayDriver.parse(delivery, 'rzp'), message)
    }
  })
})
