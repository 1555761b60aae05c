import { test } from '@japa/runner'
import { signedWebhook } from '../../src/payments/testing.ts'
import { gateways } from '../../src/payments/main.ts'
import type { PaymentDriver, WebhookEvent } from '../../src/payments/types.ts'
import { CREDENTIALS } from './helpers.ts'
import { mercadoPagoStandIn } from './stand_ins.ts'
import { mercadoPagoPayment } from './hmac_gateway_fixtures.ts'

async function parse(name: string, payload: unknown): Promise<WebhookEvent<any>> {
  const factory = {
    lemonsqueezy: gateways.lemonsqueezy({ signingSecret: CREDENTIALS.lemonsqueezy.webhookSecret }),
    pagarme: gateways.pagarme(CREDENTIALS.pagarme),
    razorpay: gateways.razorpay(CREDENTIALS.razorpay),
    square: gateways.square(CREDENTIALS.square),
  }[name]!
  const driver: PaymentDriver = await factory.resolver()
  const signed = signedWebhook(name, payload, (CREDENTIALS as any)[name])
  const parsed = driver.parse(
    { rawBody: Buffer.from(signed.body), headers: signed.headers, query: signed.query ?? {} },
    name
  )
  return Array.isArray(parsed) ? parsed[0] : parsed
}

/** Parses one Mercado Pago notification of `type` whose resource the stand-in answers */
async function mercadoPago(
  type: string,
  path: string,
  resource: Record<string, unknown>,
  action = 'updated'
) {
  const api = await mercadoPagoStandIn(CREDENTIALS.mercadopago.accessToken)
  api.set(path, resource)
  const driver = await gateways
    .mercadopago({ ...CREDENTIALS.mercadopago, apiBaseUrl: api.url })
    .resolver()
  const signed = signedWebhook(
    'mercadopago',
    { id: 1, type, action: `${type}.${action}`, data: { id: String(resource.id) } },
    CREDENTIALS.mercadopago
  )
  const request = {
    rawBody: Buffer.from(signed.body),
    headers: signed.headers,
    query: signed.query!,
  }
  await driver.confirm!(request)
  return driver.parse(request, 'mercadopago') as WebhookEvent<any>
}

const lemon = (name: string, type: string, attributes: Record<string, unknown>) => ({
  meta: { event_name: name, custom_data: { externalReference: 'ord-1' } },
  data: { type, id: '42', attributes: { updated_at: '2024-06-12T00:00:00Z', ...attributes } },
})

const pagarme = (type: string, data: Record<string, unknown>) => ({
  id: `hook_${type}`,
  type,
  created_at: '2024-06-12T00:00:00Z',
  data: { id: 'ch_1', code: 'ord-1', amount: 1000, currency: 'BRL', ...data },
})

const razorpay = (event: string, payload: Record<string, unknown>) => ({
  entity: 'event',
  event,
  payload,
  created_at: 1_718_000_000,
})

const square = (type: string, object: Record<string, unknown>) => ({
  type,
  event_id: `evt-${type}`,
  created_at: '2024-06-12T00:00:00Z',
  data: { type: Object.keys(object)[0], id: 'x', object },
})

const types = (events: WebhookEvent[]) => events.map((event) => event.type)

test.group('Gateway mapping: Lemon Squeezy, Mercado Pago, Pagar.me, Razorpay, Square', () => {
  test('lemonsqueezy: orders, invoices and subscriptions', async ({ assert }) => {
    const order = { total: 1000, currency: 'usd', customer_id: 9 }
    const events = [
      await parse('lemonsqueezy', lemon('order_created', 'orders', { ...order, status: 'paid' })),
      await parse(
        'lemonsqueezy',
        lemon('subscription_payment_failed', 'subscription-invoices', {
          ...order,
          status: 'pending',
        })
      ),
      await parse(
        'lemonsqueezy',
        lemon('order_refunded', 'orders', {
          ...order,
          status: 'partial_refund',
          refunded_amount: 400,
        })
      ),
      await parse(
        'lemonsqueezy',
        lemon('order_refunded', 'orders', { ...order, status: 'refunded', refunded_amount: 1000 })
      ),
      await parse(
        'lemonsqueezy',
        lemon('subscription_created', 'subscriptions', { status: 'active', variant_id: 5 })
      ),
      await parse(
        'lemonsqueezy',
        lemon('subscription_paused', 'subscriptions', { status: 'paused' })
      ),
      await parse(
        'lemonsqueezy',
        lemon('subscription_cancelled', 'subscriptions', { status: 'cancelled' })
      ),
      await parse('lemonsqueezy', lemon('license_key_created', 'license-keys', {})),
    ]
    assert.deepEqual(types(events), [
      'payment.succeeded',
      'payment.failed',
      'payment.updated',
      'payment.refunded',
      'subscription.created',
      'subscription.updated',
      'subscription.canceled',
      'license_key_created',
    ])
    assert.deepEqual(events[0].data, {
      paymentId: '42',
      amount: 1000,
      currency: 'USD',
      customerId: '9',
      externalReference: 'ord-1',
      status: 'paid',
      paidAt: null,
    })
    assert.deepEqual(events[2].data.refunds, [{ id: '42:cumulative', amount: 400 }])
    assert.equal(events[0].id, 'lemonsqueezy:order_created:42:2024-06-12T00:00:00Z')
    assert.equal(events[4].data.planId, '5')
  })

  test('mercadopago: the API answer, not the notification, decides the type', async ({
    assert,
  }) => {
    const payment = (id: string, changes: Record<string, unknown>) =>
      mercadoPago('payment', `/v1/payments/${id}`, mercadoPagoPayment(id, changes))
    const events = [
      await payment('1', {}),
      await payment('2', { status: 'rejected' }),
      await payment('3', { status: 'in_process' }),
      await payment('4', { transaction_amount_refunded: 30.5 }),
      await payment('5', { status: 'refunded', transaction_amount_refunded: 129.9 }),
      await payment('6', { status: 'in_mediation' }),
      await payment('7', { status: 'charged_back' }),
      await mercadoPago('topic_chargebacks_wh', '/v1/chargebacks/cb1', {
        id: 'cb1',
        payments: [7],
        amount: 129.9,
        currency: 'BRL',
        coverage_applied: true,
      }),
      await mercadoPago(
        'subscription_preapproval',
        '/preapproval/pre1',
        { id: 'pre1', status: 'authorized' },
        'created'
      ),
      await mercadoPago('subscription_preapproval', '/preapproval/pre2', {
        id: 'pre2',
        status: 'paused',
      }),
      await mercadoPago('subscription_preapproval', '/preapproval/pre3', {
        id: 'pre3',
        status: 'cancelled',
      }),
      await mercadoPago('merchant_order', '/unused', { id: 'mo1' }),
    ]
    assert.deepEqual(types(events), [
      'payment.succeeded',
      'payment.failed',
      'payment.updated',
      'payment.updated',
      'payment.refunded',
      'payment.dispute_warning',
      'payment.disputed',
      'payment.dispute_closed',
      'subscription.created',
      'subscription.updated',
      'subscription.canceled',
      'merchant_order',
    ])
    assert.deepEqual(events[0].data, {
      paymentId: '1',
      amount: 12990,
      currency: 'BRL',
      customerId: '123',
      externalReference: 'order-1',
      status: 'paid',
      paidAt: '2024-06-12T20:45:03.000Z',
    })
    assert.deepEqual(events[3].data.refunds, [{ id: '4:cumulative', amount: 3050 }])
    assert.equal(events[7].data.outcome, 'won')
    assert.equal(events[0].id, 'mercadopago:payment:1:approved:2024-06-12T16:45:03.000-04:00')
  })

  test('pagarme: charges and subscriptions', async ({ assert }) => {
    const events = [
      await parse('pagarme', pagarme('charge.paid', { status: 'paid' })),
      await parse('pagarme', pagarme('charge.payment_failed', { status: 'failed' })),
      await parse('pagarme', pagarme('charge.pending', { status: 'pending' })),
      await parse('pagarme', pagarme('charge.partial_canceled', { canceled_amount: 300 })),
      await parse('pagarme', pagarme('charge.refunded', { canceled_amount: 1000 })),
      await parse('pagarme', pagarme('charge.chargedback', { status: 'chargedback' })),
      await parse('pagarme', pagarme('subscription.created', { id: 'sub_1', status: 'active' })),
      await parse('pagarme', pagarme('subscription.canceled', { id: 'sub_1', status: 'canceled' })),
      await parse('pagarme', pagarme('order.paid', {})),
    ]
    assert.deepEqual(types(events), [
      'payment.succeeded',
      'payment.failed',
      'payment.updated',
      'payment.updated',
      'payment.refunded',
      'payment.disputed',
      'subscription.created',
      'subscription.canceled',
      'order.paid',
    ])
    assert.deepEqual(
      [events[0].id, events[0].data.externalReference],
      ['hook_charge.paid', 'ord-1']
    )
    assert.deepEqual(events[3].data.refunds, [{ id: 'ch_1:cumulative', amount: 300 }])
  })

  test('razorpay: payments, refunds, disputes and subscriptions', async ({ assert }) => {
    const payment = {
      entity: {
        id: 'pay_1',
        amount: 5000,
        currency: 'INR',
        notes: { external_reference: 'ord-1' },
      },
    }
    const dispute = (phase: string) => ({
      dispute: {
        entity: {
          id: 'disp_1',
          payment_id: 'pay_1',
          amount: 5000,
          currency: 'INR',
          phase,
          respond_by: 1_900_000_000,
        },
      },
    })
    const refund = { entity: { id: 'rfnd_1', payment_id: 'pay_1', amount: 2000, currency: 'INR' } }
    const events = [
      await parse('razorpay', razorpay('payment.captured', { payment })),
      await parse('razorpay', razorpay('payment.failed', { payment })),
      await parse(
        'razorpay',
        razorpay('refund.processed', {
          refund,
          payment: { entity: { ...payment.entity, refund_status: 'partial' } },
        })
      ),
      await parse(
        'razorpay',
        razorpay('refund.processed', {
          refund,
          payment: { entity: { ...payment.entity, refund_status: 'full', amount_refunded: 5000 } },
        })
      ),
      await parse('razorpay', razorpay('payment.dispute.created', dispute('fraud'))),
      await parse('razorpay', razorpay('payment.dispute.created', dispute('chargeback'))),
      await parse('razorpay', razorpay('payment.dispute.lost', dispute('chargeback'))),
      await parse(
        'razorpay',
        razorpay('subscription.authenticated', {
          subscription: { entity: { id: 'sub_1', status: 'authenticated' } },
        })
      ),
      await parse(
        'razorpay',
        razorpay('subscription.charged', {
          subscription: { entity: { id: 'sub_1', status: 'active' } },
        })
      ),
      await parse(
        'razorpay',
        razorpay('subscription.cancelled', {
          subscription: { entity: { id: 'sub_1', status: 'cancelled', ended_at: 1_718_000_000 } },
        })
      ),
      await parse('razorpay', razorpay('payment.authorized', { payment })),
    ]
    assert.deepEqual(types(events), [
      'payment.succeeded',
      'payment.failed',
      'payment.updated',
      'payment.refunded',
      'payment.dispute_warning',
      'payment.disputed',
      'payment.dispute_closed',
      'subscription.created',
      'subscription.updated',
      'subscription.canceled',
      'payment.authorized',
    ])
    assert.equal(events[0].data.externalReference, 'ord-1')
    assert.equal(events[0].id, 'razorpay:payment.captured:pay_1:1718000000')
    assert.deepEqual(events[2].data.refunds, [{ id: 'rfnd_1', amount: 2000 }])
    assert.equal(events[5].data.actionableUntil, new Date(1_900_000_000_000).toISOString())
    assert.equal(events[6].data.outcome, 'lost')
  })

  test('square: payments, refunds, disputes and subscriptions', async ({ assert }) => {
    const payment = (status: string) => ({
      payment: {
        id: 'sq_1',
        amount_money: { amount: 1099, currency: 'USD' },
        status,
        reference_id: 'ord-1',
      },
    })
    const dispute = (state: string) => ({
      dispute: {
        id: 'dp_1',
        state,
        amount_money: { amount: 1099, currency: 'USD' },
        disputed_payment: { payment_id: 'sq_1' },
        due_at: '2024-07-01T00:00:00Z',
      },
    })
    const refund = (status: string) => ({
      refund: {
        id: 'rf_1',
        payment_id: 'sq_1',
        status,
        amount_money: { amount: 500, currency: 'USD' },
      },
    })
    const subscription = (status: string) => ({
      subscription: { id: 'sub_1', status, customer_id: 'c1' },
    })
    const events = [
      await parse('square', square('payment.updated', payment('COMPLETED'))),
      await parse('square', square('payment.updated', payment('FAILED'))),
      await parse('square', square('payment.created', payment('APPROVED'))),
      await parse('square', square('refund.updated', refund('COMPLETED'))),
      await parse('square', square('refund.created', refund('PENDING'))),
      await parse('square', square('dispute.created', dispute('INQUIRY_EVIDENCE_REQUIRED'))),
      await parse('square', square('dispute.created', dispute('EVIDENCE_REQUIRED'))),
      await parse('square', square('dispute.state.changed', dispute('WON'))),
      await parse('square', square('subscription.created', subscription('PENDING'))),
      await parse('square', square('subscription.updated', subscription('PAUSED'))),
      await parse('square', square('subscription.updated', subscription('CANCELED'))),
      await parse('square', square('invoice.payment_made', { invoice: {} })),
    ]
    assert.deepEqual(types(events), [
      'payment.succeeded',
      'payment.failed',
      'payment.updated',
      'payment.updated',
      'refund_pending',
      'payment.dispute_warning',
      'payment.disputed',
      'payment.dispute_closed',
      'subscription.created',
      'subscription.updated',
      'subscription.canceled',
      'invoice.payment_made',
    ])
    assert.deepEqual(events[3].data.refunds, [{ id: 'rf_1', amount: 500 }])
    assert.equal(events[7].data.outcome, 'won')
    assert.equal(events[0].data.externalReference, 'ord-1')
  })
})
