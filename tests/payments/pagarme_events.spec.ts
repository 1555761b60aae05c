/**
 * Pagar.me, database-free: deliveries signed with the documented formula
 * written out here (`X-Hub-Signature: sha1=<hex HMAC-SHA1 of the raw body>`),
 * never with Atrium's own signer, and each event compared whole with
 * docs/payments.md.
 */
import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { PagarmeDriver } from '../../src/payments/drivers/pagarme.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'

const PAGARME_KEY = 'sk_independent_pagarme_key'

const request = (body: string, headers: Record<string, string>): WebhookRequest => ({
  rawBody: Buffer.from(body),
  headers,
  query: {},
})
const pagarmeSigned = (body: string, key = PAGARME_KEY) =>
  request(body, { 'x-hub-signature': `sha1=${createHmac('sha1', key).update(body).digest('hex')}` })

const pagarmeDriver = new PagarmeDriver({ secretKey: PAGARME_KEY })

const pagarme = (type: string, data: Record<string, unknown>) =>
  pagarmeDriver.parse(
    pagarmeSigned(
      JSON.stringify({ id: 'hook_01', type, created_at: '2026-11-20T10:00:00Z', data })
    ),
    'pagarme'
  )

test.group('Payments Pagar.me: each event, whole', () => {
  const charge = {
    id: 'ch_01',
    code: 'charge-code',
    amount: 1130,
    currency: 'brl',
    customer: { id: 'cus_01' },
    metadata: { externalReference: 'order-1' },
    paid_at: '2026-11-20T09:00:00Z',
    order: { code: 'order-code' },
  }
  const common = {
    paymentId: 'ch_01',
    amount: 1130,
    currency: 'BRL',
    customerId: 'cus_01',
    externalReference: 'order-1',
  }

  test('a paid charge is payment.succeeded; the hook id is the event id', async ({ assert }) => {
    const body = JSON.stringify({
      id: 'hook_77',
      type: 'charge.paid',
      created_at: '2026-11-20T10:00:00Z',
      data: charge,
    })
    assert.deepEqual(pagarmeDriver.parse(pagarmeSigned(body), 'pagarme'), {
      id: 'hook_77',
      provider: 'pagarme',
      raw: JSON.parse(body),
      occurredAt: '2026-11-20T10:00:00.000Z',
      type: 'payment.succeeded',
      data: { ...common, status: 'paid', paidAt: '2026-11-20T09:00:00.000Z' },
    })
    const references: [Record<string, unknown>, string | null][] = [
      [{ metadata: { external_reference: 'order-2' } }, 'order-2'],
      [{ metadata: 'none' }, 'charge-code'],
      [{ metadata: {}, code: undefined }, 'order-code'],
      [{ metadata: {}, code: undefined, order: undefined }, null],
    ]
    for (const [extra, expected] of references) {
      const event = pagarme('charge.paid', { ...charge, ...extra })
      assert.strictEqual((event.data as any).externalReference, expected)
    }
    const bare = pagarme('charge.paid', { id: 'ch_02', amount: 5 })
    assert.deepInclude(bare.data as any, { currency: 'BRL', customerId: null, paidAt: null })
  })

  test('failed, pending and underpaid charges', async ({ assert }) => {
    const cases: [string, string, string][] = [
      ['charge.payment_failed', 'payment.failed', 'failed'],
      ['charge.pending', 'payment.updated', 'pending'],
      ['charge.underpaid', 'payment.updated', 'pending'],
    ]
    for (const [type, canonical, status] of cases) {
      const event = pagarme(type, charge)
      assert.deepEqual([event.type, event.data], [canonical, { ...common, status }])
    }
  })

  test('cancellations carry the cumulative amount; charge.refunded is always whole', async ({
    assert,
  }) => {
    const cases: [string, Record<string, unknown>, string, number][] = [
      ['charge.partial_canceled', { canceled_amount: 300 }, 'payment.updated', 300],
      ['charge.partial_canceled', { canceled_amount: 1129 }, 'payment.updated', 1129],
      ['charge.partial_canceled', { canceled_amount: 1130 }, 'payment.refunded', 1130],
      ['charge.partial_canceled', {}, 'payment.refunded', 1130],
      ['charge.refunded', { canceled_amount: 300 }, 'payment.refunded', 300],
    ]
    for (const [type, extra, canonical, refunded] of cases) {
      const event = pagarme(type, { ...charge, ...extra })
      assert.deepEqual(
        [event.type, event.data],
        [
          canonical,
          {
            ...common,
            refundedAmount: refunded,
            refunds: [{ id: 'ch_01:cumulative', amount: refunded }],
          },
        ]
      )
    }
  })

  test('a chargeback is payment.disputed, keyed by the charge', async ({ assert }) => {
    const event = pagarme('charge.chargedback', {
      ...charge,
      last_transaction: { gateway_response: { code: '4837' } },
    })
    assert.deepEqual(
      [event.type, event.data],
      [
        'payment.disputed',
        {
          disputeId: 'ch_01:chargeback',
          paymentId: 'ch_01',
          amount: 1130,
          currency: 'BRL',
          reason: '4837',
          actionableUntil: null,
          externalReference: 'order-1',
        },
      ]
    )
    for (const lastTransaction of [undefined, {}]) {
      const bare = pagarme('charge.chargedback', { ...charge, last_transaction: lastTransaction })
      assert.isNull((bare.data as any).reason)
    }
  })

  test('subscription events and passthroughs', async ({ assert }) => {
    const subscription = {
      id: 'sub_01',
      status: 'active',
      customer: { id: 'cus_01' },
      plan: { id: 'plan_01' },
      current_cycle: { end_at: '2026-12-20T10:00:00Z' },
      next_billing_at: '2026-12-21T10:00:00Z',
      canceled_at: '2026-11-21T10:00:00Z',
      code: 'sub-code',
    }
    for (const type of ['subscription.created', 'subscription.updated', 'subscription.canceled']) {
      const event = pagarme(type, subscription)
      assert.deepEqual(
        [event.type, event.data],
        [
          type,
          {
            subscriptionId: 'sub_01',
            customerId: 'cus_01',
            status: 'active',
            planId: 'plan_01',
            currentPeriodEnd: '2026-12-20T10:00:00.000Z',
            canceledAt: '2026-11-21T10:00:00.000Z',
            externalReference: 'sub-code',
          },
        ]
      )
    }
    const bare = pagarme('subscription.updated', {
      id: 'sub_02',
      next_billing_at: '2026-12-21T10:00:00Z',
    })
    assert.deepInclude(bare.data as any, {
      currentPeriodEnd: '2026-12-21T10:00:00.000Z',
      status: undefined,
      planId: null,
      customerId: null,
    })
    const order = pagarme('Order.Paid', { id: 'or_01' })
    assert.deepEqual([order.type, order.data], ['order.paid', { id: 'or_01' }])
  })

  test('a malformed delivery is refused by name', async ({ assert }) => {
    const good = JSON.stringify({ id: 'hook_1', type: 'charge.paid', data: charge })
    assert.throws(
      () => new PagarmeDriver({}).parse(pagarmeSigned(good), 'pagarme'),
      'pagarme has no secretKey'
    )
    const digest = createHmac('sha1', PAGARME_KEY).update(good).digest('hex')
    const sha256 = createHmac('sha256', PAGARME_KEY).update(good).digest('hex')
    const malformed = 'X-Hub-Signature is not "sha1=<hex>"'
    const cases: [WebhookRequest, string][] = [
      [request(good, {}), 'missing X-Hub-Signature header'],
      [request(good, { 'x-hub-signature': digest }), malformed],
      [request(good, { 'x-hub-signature': 'sha1=' }), malformed],
      [request(good, { 'x-hub-signature': `sha256=${sha256}` }), malformed],
      [request(good, { 'x-hub-signature': `SHA1=${digest}` }), malformed],
      [pagarmeSigned(good, 'sk_other'), 'X-Hub-Signature does not match the body'],
      [pagarmeSigned('[]'), 'body is not a JSON object'],
      [
        pagarmeSigned('{"id":"hook_1","type":"charge.paid"}'),
        'Pagar.me delivery has no data object',
      ],
      [pagarmeSigned('{"type":"charge.paid","data":{}}'), 'hook id is missing'],
      [pagarmeSigned('{"id":"hook_1","data":{}}'), 'event type is missing'],
      [
        pagarmeSigned('{"id":"hook_1","type":"charge.paid","data":{"amount":1}}'),
        'charge id is missing',
      ],
      [
        pagarmeSigned('{"id":"hook_1","type":"subscription.created","data":{}}'),
        'subscription id is missing',
      ],
    ]
    for (const [delivery, message] of cases) {
      assert.throws(() => pagarmeDriver.parse(delivery, 'pagarme'), message)
    }
    // The hex digest is read in either case
    const upper = request(good, { 'x-hub-signature': `sha1=${digest.toUpperCase()}` })
    assert.equal(pagarmeDriver.parse(upper, 'pagarme').type, 'payment.succeeded')
  })
})
