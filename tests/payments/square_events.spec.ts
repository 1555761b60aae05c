/**
 * Square, database-free: deliveries signed with the documented formula
 * written out here (the base64 HMAC-SHA256 of the notification URL followed
 * by the raw body), never with Atrium's own signer, and each event compared
 * whole with docs/payments.md.
 */
import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { SquareDriver } from '../../src/payments/drivers/square.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'

const SQUARE_KEY = 'square-independent-signature-key'
const SQUARE_URL = 'https://shop.example.com/webhooks/square'

const request = (body: string, headers: Record<string, string>): WebhookRequest => ({
  rawBody: Buffer.from(body),
  headers,
  query: {},
})
const squareSigned = (body: string, url = SQUARE_URL) =>
  request(body, {
    'x-square-hmacsha256-signature': createHmac('sha256', SQUARE_KEY)
      .update(url + body)
      .digest('base64'),
  })

const squareDriver = new SquareDriver({ signatureKey: SQUARE_KEY, notificationUrl: SQUARE_URL })

const square = (type: string, object: unknown) =>
  squareDriver.parse(
    squareSigned(
      JSON.stringify({
        type,
        event_id: 'evt-01',
        created_at: '2026-11-20T10:00:00Z',
        data: { object },
      })
    ),
    'square'
  )

test.group('Payments Square: each event, whole', () => {
  const squarePayment = (status?: string) => ({
    payment: {
      id: 'sq_01',
      amount_money: { amount: 1130, currency: 'USD' },
      status,
      customer_id: 'cus_01',
      reference_id: 'order-1',
      updated_at: '2026-11-20T09:00:00Z',
    },
  })
  const common = {
    paymentId: 'sq_01',
    amount: 1130,
    currency: 'USD',
    customerId: 'cus_01',
    externalReference: 'order-1',
  }

  test('payment statuses: completed, failed or canceled, anything else pending', async ({
    assert,
  }) => {
    const body = JSON.stringify({
      type: 'payment.updated',
      event_id: 'evt-77',
      created_at: '2026-11-20T10:00:00Z',
      data: { object: squarePayment('COMPLETED') },
    })
    assert.deepEqual(squareDriver.parse(squareSigned(body), 'sq'), {
      id: 'evt-77',
      provider: 'sq',
      raw: JSON.parse(body),
      occurredAt: '2026-11-20T10:00:00.000Z',
      type: 'payment.succeeded',
      data: { ...common, status: 'paid', paidAt: '2026-11-20T09:00:00.000Z' },
    })
    const cases: [string | undefined, string, string][] = [
      ['FAILED', 'payment.failed', 'failed'],
      ['CANCELED', 'payment.failed', 'failed'],
      ['APPROVED', 'payment.updated', 'pending'],
      ['PENDING', 'payment.updated', 'pending'],
      [undefined, 'payment.updated', 'pending'],
    ]
    for (const type of ['payment.created', 'payment.updated']) {
      for (const [status, canonical, state] of cases) {
        const event = square(type, squarePayment(status))
        assert.deepEqual([event.type, event.data], [canonical, { ...common, status: state }])
      }
    }
  })

  test('a completed refund is payment.updated with it; others pass as refund_<status>', async ({
    assert,
  }) => {
    const refund = {
      id: 'rf_01',
      payment_id: 'sq_01',
      status: 'COMPLETED',
      amount_money: { amount: 300, currency: 'USD' },
    }
    for (const type of ['refund.created', 'refund.updated']) {
      const event = square(type, { refund })
      assert.deepEqual(
        [event.type, event.data],
        [
          'payment.updated',
          { paymentId: 'sq_01', currency: 'USD', refunds: [{ id: 'rf_01', amount: 300 }] },
        ]
      )
    }
    for (const [status, type] of [
      ['PENDING', 'refund_pending'],
      [undefined, 'refund_unknown'],
    ]) {
      const event = square('refund.updated', { refund: { ...refund, status } })
      assert.deepEqual(
        [event.type, event.data],
        [type, JSON.parse(JSON.stringify({ ...refund, status }))]
      )
    }
  })

  test('disputes: an inquiry warns, others dispute, closing states close', async ({ assert }) => {
    const dispute = (state?: string, extra: Record<string, unknown> = {}) => ({
      dispute: {
        id: 'dp_01',
        state,
        amount_money: { amount: 1130, currency: 'USD' },
        reason: 'NOT_AS_DESCRIBED',
        disputed_payment: { payment_id: 'sq_01' },
        due_at: '2026-12-01T10:00:00Z',
        ...extra,
      },
    })
    const data = {
      disputeId: 'dp_01',
      paymentId: 'sq_01',
      amount: 1130,
      currency: 'USD',
      reason: 'NOT_AS_DESCRIBED',
      actionableUntil: '2026-12-01T10:00:00.000Z',
    }
    const created: [string, string][] = [
      ['INQUIRY_EVIDENCE_REQUIRED', 'payment.dispute_warning'],
      ['INQUIRY_PROCESSING', 'payment.dispute_warning'],
      ['EVIDENCE_REQUIRED', 'payment.disputed'],
      ['PROCESSING_INQUIRY_', 'payment.disputed'],
    ]
    for (const [state, type] of created) {
      const event = square('dispute.created', dispute(state))
      assert.deepEqual([event.type, event.data], [type, data], state)
    }
    const closed: [string, string][] = [
      ['WON', 'won'],
      ['LOST', 'lost'],
      ['ACCEPTED', 'lost'],
      ['INQUIRY_CLOSED', 'canceled'],
    ]
    for (const [state, outcome] of closed) {
      const event = square('dispute.state.changed', dispute(state))
      assert.deepEqual([event.type, event.data], ['payment.dispute_closed', { ...data, outcome }])
    }
    for (const type of ['dispute.state.changed', 'dispute.state.updated']) {
      const event = square(type, dispute('PROCESSING', { id: undefined, dispute_id: 'dp_01' }))
      assert.deepEqual([event.type, event.data], [type, data])
    }
  })

  test('subscriptions: created, canceled or deactivated, otherwise updated', async ({ assert }) => {
    const subscription = (status?: string) => ({
      subscription: {
        id: 'sub_01',
        status,
        customer_id: 'cus_01',
        plan_variation_id: 'var_01',
        plan_id: 'plan_01',
        charged_through_date: '2026-12-20',
        canceled_date: '2026-11-21',
      },
    })
    const cases: [string, string | undefined, string][] = [
      ['subscription.created', 'CANCELED', 'subscription.created'],
      ['subscription.updated', 'CANCELED', 'subscription.canceled'],
      ['subscription.updated', 'DEACTIVATED', 'subscription.canceled'],
      ['subscription.updated', 'PAUSED', 'subscription.updated'],
      ['subscription.updated', undefined, 'subscription.updated'],
    ]
    for (const [type, status, canonical] of cases) {
      const event = square(type, subscription(status))
      assert.deepEqual(
        [event.type, event.data],
        [
          canonical,
          {
            subscriptionId: 'sub_01',
            customerId: 'cus_01',
            status,
            planId: 'var_01',
            currentPeriodEnd: '2026-12-20T00:00:00.000Z',
            canceledAt: '2026-11-21T00:00:00.000Z',
            externalReference: null,
          },
        ]
      )
    }
    const plan = square('subscription.updated', { subscription: { id: 's', plan_id: 'plan_01' } })
    assert.equal((plan.data as any).planId, 'plan_01')
    const invoice = square('Invoice.Payment_Made', { invoice: { id: 'inv_01' } })
    assert.deepEqual(
      [invoice.type, invoice.data],
      ['invoice.payment_made', { invoice: { id: 'inv_01' } }]
    )
    const noObject = square('labor.shift.created', 'none')
    assert.deepEqual(noObject.data, {})
  })

  test('a malformed delivery, or one signed for another URL, is refused by name', async ({
    assert,
  }) => {
    const good = JSON.stringify({
      type: 'payment.updated',
      event_id: 'e',
      data: { object: squarePayment('COMPLETED') },
    })
    for (const options of [{ signatureKey: SQUARE_KEY }, { notificationUrl: SQUARE_URL }]) {
      assert.throws(
        () => new SquareDriver(options).parse(squareSigned(good), 'sq'),
        'square needs both signatureKey and notificationUrl'
      )
    }
    const cases: [WebhookRequest, string][] = [
      [request(good, {}), 'missing x-square-hmacsha256-signature header'],
      [
        squareSigned(good, 'https://proxy.internal/webhooks/square'),
        'x-square-hmacsha256-signature does not match the notification URL and body',
      ],
      [squareSigned('{"type":"payment.updated","event_id":"e"}'), 'Square event has no data'],
      [squareSigned('{"event_id":"e","data":{}}'), 'event type is missing'],
      [squareSigned('{"type":"x","data":{}}'), 'event_id is missing'],
    ]
    for (const [type, object, message] of [
      ['payment.updated', {}, 'Square event has no data.object.payment'],
      ['refund.created', { refund: [] }, 'Square event has no data.object.refund'],
      ['dispute.created', {}, 'Square event has no data.object.dispute'],
      ['subscription.created', {}, 'Square event has no data.object.subscription'],
      [
        'payment.updated',
        { payment: { id: 'p' } },
        'amount undefined is not an integer in minor units',
      ],
      ['refund.created', { refund: { status: 'COMPLETED' } }, 'refund payment_id is missing'],
      ['dispute.created', { dispute: { id: 'd' } }, 'disputed payment id is missing'],
      [
        'payment.updated',
        { payment: { amount_money: { amount: 100, currency: 'USD' } } },
        'payment id is missing',
      ],
      [
        'refund.updated',
        {
          refund: {
            status: 'COMPLETED',
            payment_id: 'p',
            amount_money: { amount: 100, currency: 'USD' },
          },
        },
        'refund id is missing',
      ],
      [
        'dispute.created',
        { dispute: { disputed_payment: { payment_id: 'p' } } },
        'dispute id is missing',
      ],
      [
        'subscription.updated',
        { subscription: { status: 'ACTIVE' } },
        'subscription id is missing',
      ],
    ] as const) {
      cases.push([squareSigned(JSON.stringify({ type, event_id: 'e', data: { object } })), message])
    }
    for (const [delivery, message] of cases) {
      assert.throws(() => squareDriver.parse(delivery, 'sq'), message)
    }
  })
})
