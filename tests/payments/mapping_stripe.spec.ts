import { createHmac } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from '@japa/runner'
import { StripeDriver } from '../../src/payments/drivers/stripe.ts'
import type { WebhookEvent, WebhookRequest } from '../../src/payments/types.ts'

/**
 * What the Stripe and Adyen drivers map a verified delivery to, field by
 * field, as docs/payments.md's tables say. Deliveries are signed here from
 * the gateways' documented formulas, never with Atrium's helpers. Database
 * free: the fast specs of the `drivers-stripe-adyen` mutation group.
 */

const STRIPE_SECRET = 'whsec_mapping'
const stripe = new StripeDriver({ webhookSecret: STRIPE_SECRET })

/** `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, as Stripe documents it */
function stripeRequest(body: string): WebhookRequest {
  const t = Math.floor(Date.now() / 1000)
  const v1 = createHmac('sha256', STRIPE_SECRET).update(`${t}.${body}`).digest('hex')
  return {
    rawBody: Buffer.from(body),
    headers: { 'stripe-signature': `t=${t},v1=${v1}` },
    query: {},
  }
}

function stripeEvent(type: string, object: Record<string, unknown>): WebhookEvent<any> {
  const body = JSON.stringify({ id: `evt_${type}`, type, created: 1_700_000_000, data: { object } })
  return stripe.parse(stripeRequest(body), 'stripe-main')
}

const DUE = 1_900_000_000
const iso = (unix: number) => new Date(unix * 1000).toISOString()

test.group('Stripe mapping', () => {
  test('a payment intent: id, amount received in minor units, upper-case currency, reference', ({
    assert,
  }) => {
    const intent = {
      id: 'pi_1',
      amount: 1000,
      amount_received: 800,
      currency: 'brl',
      customer: 'cus_1',
      metadata: { externalReference: 'order-1' },
    }
    const event = stripeEvent('payment_intent.succeeded', intent)
    assert.deepEqual(
      [event.id, event.type, event.provider, event.occurredAt],
      ['evt_payment_intent.succeeded', 'payment.succeeded', 'stripe-main', iso(1_700_000_000)]
    )
    assert.deepEqual(event.data, {
      paymentId: 'pi_1',
      amount: 800,
      currency: 'BRL',
      status: 'paid',
      paidAt: null,
      customerId: 'cus_1',
      externalReference: 'order-1',
    })
    assert.equal((event.raw as any).data.object.id, 'pi_1')
    const failed = stripeEvent('payment_intent.payment_failed', {
      id: 'pi_2',
      amount: 500,
      amount_received: 0,
      metadata: 'not an object',
    })
    assert.equal(failed.type, 'payment.failed')
    assert.deepEqual(failed.data, {
      paymentId: 'pi_2',
      amount: 500,
      currency: undefined,
      status: 'failed',
      paidAt: null,
      customerId: null,
      externalReference: null,
    })
  })

  test('externalReference: metadata.externalReference, then external_reference, then client_reference_id', ({
    assert,
  }) => {
    const reference = (object: Record<string, unknown>) =>
      stripeEvent('payment_intent.succeeded', { id: 'pi_r', amount: 1, ...object }).data
        .externalReference
    assert.equal(
      reference({ metadata: { external_reference: 'b' }, client_reference_id: 'c' }),
      'b'
    )
    assert.equal(reference({ metadata: { externalReference: '' }, client_reference_id: 'c' }), 'c')
    assert.equal(reference({ metadata: { externalReference: 'a', external_reference: 'b' } }), 'a')
  })

  test('checkout.session.completed: only a paid session with a payment intent is a payment', ({
    assert,
  }) => {
    const session = {
      id: 'cs_1',
      payment_intent: 'pi_cs',
      payment_status: 'paid',
      amount_total: 4990,
      customer: 'cus_9',
    }
    const paid = stripeEvent('checkout.session.completed', session)
    assert.deepEqual(paid.data, {
      paymentId: 'pi_cs',
      amount: 4990,
      currency: undefined,
      status: 'paid',
      customerId: 'cus_9',
      externalReference: null,
    })
    for (const other of [{ payment_status: 'unpaid' }, { payment_intent: null }]) {
      const event = stripeEvent('checkout.session.completed', { ...session, ...other })
      assert.equal(event.type, 'checkout.session.completed')
      assert.deepEqual(event.data, { ...session, ...other })
    }
  })

  test('charge.refunded: whole when flagged or when the refunded sum reaches the amount', ({
    assert,
  }) => {
    const charge = { id: 'ch_1', amount: 1000, currency: 'usd' }
    const refund = (extra: Record<string, unknown>) =>
      stripeEvent('charge.refunded', { ...charge, ...extra })
    const partial = refund({ payment_intent: 'pi_1', amount_refunded: 999 })
    assert.equal(partial.type, 'payment.updated')
    assert.deepEqual(partial.data, {
      paymentId: 'pi_1',
      amount: 1000,
      currency: 'USD',
      refundedAmount: 999,
      refunds: [{ id: 'pi_1:cumulative', amount: 999 }],
      externalReference: null,
    })
    assert.equal(refund({ amount_refunded: 1000 }).type, 'payment.refunded')
    assert.equal(refund({ amount_refunded: 10, refunded: true }).type, 'payment.refunded')
    assert.equal(refund({ amount_refunded: 10, refunded: 'true' }).type, 'payment.updated')
    // A charge without a payment intent is its own payment
    assert.equal(refund({ amount_refunded: 10 }).data.paymentId, 'ch_1')
    const noCurrency = stripeEvent('charge.refunded', { id: 'ch_2', amount: 5, amount_refunded: 5 })
    assert.isUndefined(noCurrency.data.currency)
  })

  test('disputes: an inquiry warns, a chargeback disputes, an update passes through, a close has its outcome', ({
    assert,
  }) => {
    const dispute = {
      id: 'dp_1',
      charge: 'ch_1',
      amount: 500,
      currency: 'eur',
      reason: 'fraudulent',
      evidence_details: { due_by: DUE },
      metadata: { externalReference: 'order-d' },
    }
    const disputed = stripeEvent('charge.dispute.created', { ...dispute, status: 'needs_response' })
    assert.equal(disputed.type, 'payment.disputed')
    assert.deepEqual(disputed.data, {
      disputeId: 'dp_1',
      paymentId: 'ch_1',
      amount: 500,
      currency: 'EUR',
      reason: 'fraudulent',
      actionableUntil: iso(DUE),
      externalReference: 'order-d',
    })
    const inquiry = stripeEvent('charge.dispute.created', {
      ...dispute,
      status: 'warning_needs_response',
      payment_intent: 'pi_d',
    })
    assert.deepEqual([inquiry.type, inquiry.data.paymentId], ['payment.dispute_warning', 'pi_d'])
    // A status that only contains "warning_" is not an inquiry; none at all is a chargeback
    const unprefixed = stripeEvent('charge.dispute.created', { ...dispute, status: 'x_warning_' })
    assert.equal(unprefixed.type, 'payment.disputed')
    const bare = stripeEvent('charge.dispute.created', { id: 'dp_2', charge: 'ch_2', amount: 1 })
    assert.deepEqual(
      [bare.type, bare.data.currency, bare.data.reason, bare.data.actionableUntil],
      ['payment.disputed', undefined, null, null]
    )
    const updated = stripeEvent('charge.dispute.updated', { ...dispute, status: 'warning_x' })
    assert.deepEqual([updated.type, updated.data], ['charge.dispute.updated', disputed.data])
    const outcomes = ['won', 'lost', 'warning_closed', 'prevented', 'under_review'].map(
      (status) => {
        const closed = stripeEvent('charge.dispute.closed', { ...dispute, status })
        assert.equal(closed.type, 'payment.dispute_closed')
        assert.deepEqual(closed.data, { ...disputed.data, outcome: closed.data.outcome })
        return closed.data.outcome
      }
    )
    assert.deepEqual(outcomes, ['won', 'lost', 'canceled', 'canceled', undefined])
  })

  test('radar.early_fraud_warning.created is a dispute warning of its charge', ({ assert }) => {
    const warning = stripeEvent('radar.early_fraud_warning.created', {
      id: 'issfr_1',
      charge: 'ch_1',
      payment_intent: 'pi_w',
      fraud_type: 'misc',
    })
    assert.equal(warning.type, 'payment.dispute_warning')
    assert.deepEqual(warning.data, {
      disputeId: 'issfr_1',
      paymentId: 'pi_w',
      reason: 'misc',
      actionableUntil: null,
    })
    const byCharge = stripeEvent('radar.early_fraud_warning.created', { id: 'i2', charge: 'ch_2' })
    assert.deepEqual([byCharge.data.paymentId, byCharge.data.reason], ['ch_2', null])
  })

  test('subscriptions: created, updated, deleted with plan, period end and cancel time', ({
    assert,
  }) => {
    const subscription = {
      id: 'sub_1',
      customer: 'cus_1',
      status: 'active',
      items: { data: [{ price: { id: 'price_1' }, current_period_end: DUE }] },
      canceled_at: 1_800_000_000,
      metadata: { externalReference: 'acct-1' },
    }
    const created = stripeEvent('customer.subscription.created', subscription)
    assert.equal(created.type, 'subscription.created')
    assert.deepEqual(created.data, {
      subscriptionId: 'sub_1',
      customerId: 'cus_1',
      status: 'active',
      planId: 'price_1',
      currentPeriodEnd: iso(DUE),
      canceledAt: iso(1_800_000_000),
      externalReference: 'acct-1',
    })
    const updated = stripeEvent('customer.subscription.updated', {
      id: 'sub_1',
      status: 'past_due',
      plan: { id: 'plan_old' },
      current_period_end: 1_950_000_000,
    })
    assert.equal(updated.type, 'subscription.updated')
    assert.deepEqual(updated.data, {
      subscriptionId: 'sub_1',
      customerId: null,
      status: 'past_due',
      planId: 'plan_old',
      currentPeriodEnd: iso(1_950_000_000),
      canceledAt: null,
      externalReference: null,
    })
    const deleted = stripeEvent('customer.subscription.deleted', { id: 'sub_1', status: 'x' })
    assert.deepEqual([deleted.type, deleted.data.status], ['subscription.canceled', 'canceled'])
    assert.isUndefined(stripeEvent('customer.subscription.updated', { id: 's' }).data.status)
    // Without items (or with none) the plan and period come from the subscription itself
    for (const items of [{}, { data: [] }]) {
      const legacy = stripeEvent('customer.subscription.updated', {
        id: 'sub_2',
        items,
        plan: { id: 'plan_2' },
        current_period_end: DUE,
      })
      assert.deepEqual([legacy.data.planId, legacy.data.currentPeriodEnd], ['plan_2', iso(DUE)])
      const undated = stripeEvent('customer.subscription.updated', { id: 'sub_3', items })
      assert.deepEqual([undated.data.planId, undated.data.currentPeriodEnd], [null, null])
    }
  })

  test('other types pass through with the object; malformed events are refused by name', ({
    assert,
  }) => {
    const invoice = { id: 'in_1', total: 5 }
    assert.deepEqual(
      [stripeEvent('Invoice.Paid', invoice).type, stripeEvent('invoice.paid', invoice).data],
      ['invoice.paid', invoice]
    )
    const refused = (event: unknown) => () =>
      stripe.parse(stripeRequest(JSON.stringify(event)), 's')
    const object = { id: 'pi_x', amount: 1 }
    for (const data of [null, { object: null }, { object: [] }, 'text']) {
      assert.throws(
        refused({ id: 'e', type: 'invoice.paid', data }),
        'Stripe event has no data.object'
      )
    }
    assert.throws(refused({ type: 'x', data: { object } }), /^event id is missing$/)
    assert.throws(refused({ id: 'e', data: { object } }), /^event type is missing$/)
    assert.throws(
      refused({ id: 'e', type: 'payment_intent.succeeded', data: { object: { amount: 1 } } }),
      /^payment intent id is missing$/
    )
    const missing: [type: string, object: Record<string, unknown>, message: string][] = [
      [
        'checkout.session.completed',
        { payment_status: 'paid', payment_intent: true },
        'payment_intent',
      ],
      ['charge.refunded', { amount: 1, amount_refunded: 1 }, 'charge id'],
      ['charge.dispute.created', { charge: 'ch', amount: 1 }, 'dispute id'],
      ['charge.dispute.closed', { id: 'dp', amount: 1 }, 'dispute charge'],
      ['radar.early_fraud_warning.created', { charge: 'ch' }, 'early fraud warning id'],
      ['radar.early_fraud_warning.created', { id: 'w' }, 'warning charge'],
      ['customer.subscription.created', { status: 'active' }, 'subscription id'],
    ]
    for (const [type, fields, what] of missing) {
      assert.throws(
        refused({ id: 'e', type, data: { object: fields } }),
        new RegExp(`^${what} is missing$`)
      )
    }
    assert.throws(
      refused({ id: 'e', type: 'payment_intent.succeeded', data: { object: { id: 'p' } } }),
      /^amount undefined is not an integer in minor units$/
    )
    assert.isNull(
      stripe.parse(
        stripeRequest(JSON.stringify({ id: 'e', type: 'x', created: 'now', data: { object } })),
        's'
      ).occurredAt
    )
  })

  test('subscribes to every Stripe event its table maps', ({ assert }) => {
    assert.sameMembers(stripe.subscribedEvents, [
      'payment_intent.succeeded',
      'payment_intent.payment_failed',
      'checkout.session.completed',
      'charge.refunded',
      'charge.dispute.created',
      'charge.dispute.closed',
      'radar.early_fraud_warning.created',
      'customer.subscription.created',
      'customer.subscription.updated',
      'customer.subscription.deleted',
    ])
  })
})

test.group('Stripe client for payments:webhook --create', () => {
  test('calls the configured API host with the apiKey, once, without retrying a failure', async ({
    assert,
  }) => {
    const calls: string[] = []
    const api = createServer((request, response) => {
      calls.push(`${request.method} ${request.url} ${request.headers.authorization}`)
      response.writeHead(500, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ error: { type: 'api_error', message: 'down' } }))
    })
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = api.address() as AddressInfo
      const driver = new StripeDriver({
        webhookSecret: STRIPE_SECRET,
        apiKey: 'sk_test_key',
        api: { host: '127.0.0.1', port, protocol: 'http' },
      })
      await assert.rejects(() =>
        driver.client.webhookEndpoints.create({ url: 'https://x.test', enabled_events: ['*'] })
      )
      assert.deepEqual(calls, ['POST /v1/webhook_endpoints Bearer sk_test_key'])
    } finally {
      api.close()
    }
  })
})
