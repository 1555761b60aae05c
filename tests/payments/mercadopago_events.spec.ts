/**
 * Mercado Pago, database-free: independently signed notifications
 * (mercadopago_notifications.ts) whose resource a loopback API answers; each
 * event compared whole with docs/payments.md.
 */
import { test } from '@japa/runner'
import { setup, TOKEN } from './mercadopago_notifications.ts'

const common = {
  paymentId: '1001',
  amount: 12990,
  currency: 'BRL',
  customerId: '123',
  externalReference: 'order-1',
}

test.group('Payments Mercado Pago: the API answer decides the event', () => {
  test('an approved payment is payment.succeeded; its state makes the id', async ({ assert }) => {
    const { api, payment } = await setup()
    const event = await payment('1001')
    assert.deepEqual(event, {
      provider: 'mercadopago',
      raw: {
        notification: { type: 'payment', action: 'payment.updated', data: { id: '1001' } },
        resource: (event.raw as any).resource,
      },
      id: 'mercadopago:payment:1001:approved:2026-11-20T10:00:00.000-03:00',
      occurredAt: '2026-11-20T13:00:00.000Z',
      type: 'payment.succeeded',
      data: { ...common, status: 'paid', paidAt: '2026-11-20T12:00:00.000Z' },
    })
    assert.equal((event.raw as any).resource.id, 1001)
    assert.deepEqual(
      api.requests.map((r) => [r.method, r.url, r.headers.authorization]),
      [['GET', '/v1/payments/1001', `Bearer ${TOKEN}`]]
    )
    const pesos = await payment('1002', {
      currency_id: 'CLP',
      transaction_amount: 1500,
      date_last_updated: null,
      last_modified: '2026-11-20T10:00:00Z',
    })
    assert.deepEqual(
      [pesos.id, (pesos.data as any).amount],
      ['mercadopago:payment:1002:approved:2026-11-20T10:00:00Z', 1500]
    )
    const undated = await payment('1003', { currency_id: undefined, date_last_updated: undefined })
    assert.deepEqual(
      [undated.id, undated.occurredAt],
      ['mercadopago:payment:1003:approved:-', null]
    )
    assert.deepInclude(undated.data as any, { amount: 12990, currency: undefined })
  })

  test('each payment status maps as the table says', async ({ assert }) => {
    const { payment } = await setup()
    const cases: [string, string, string][] = [
      ['rejected', 'payment.failed', 'failed'],
      ['cancelled', 'payment.failed', 'failed'],
      ['pending', 'payment.updated', 'pending'],
      ['in_process', 'payment.updated', 'pending'],
      ['authorized', 'payment.updated', 'pending'],
    ]
    for (const [status, type, state] of cases) {
      const event = await payment('1001', { status })
      assert.deepEqual(
        [event.id.split(':')[3], event.type, event.data],
        [status, type, { ...common, status: state }]
      )
    }
    // No status at all: pending, and an empty state in the id
    const unknown = await payment('1001', { status: undefined })
    assert.deepEqual(
      [unknown.id, unknown.type],
      ['mercadopago:payment:1001::2026-11-20T10:00:00.000-03:00', 'payment.updated']
    )
  })

  test('refunds carry the cumulative amount; refunded is whole', async ({ assert }) => {
    const { payment } = await setup()
    const partial = await payment('1001', { transaction_amount_refunded: 30.5 })
    const refunds = (amount: number) => [{ id: '1001:cumulative', amount }]
    assert.deepEqual(
      [partial.type, partial.data],
      ['payment.updated', { ...common, refundedAmount: 3050, refunds: refunds(3050) }]
    )
    const refunded = await payment('1001', {
      status: 'refunded',
      transaction_amount_refunded: 129.9,
    })
    assert.deepEqual(
      [refunded.type, refunded.data],
      ['payment.refunded', { ...common, refundedAmount: 12990, refunds: refunds(12990) }]
    )
    // Without the refunded amount, a refunded payment is refunded whole
    for (const missing of [null, undefined]) {
      const whole = await payment('1001', {
        status: 'refunded',
        transaction_amount_refunded: missing,
      })
      assert.deepEqual(whole.data, { ...common, refundedAmount: 12990, refunds: refunds(0) })
    }
  })

  test('a claim warns, a chargeback disputes; a chargeback read is disputed or won', async ({
    assert,
  }) => {
    const { api, deliver, payment } = await setup()
    for (const [status, type] of [
      ['in_mediation', 'payment.dispute_warning'],
      ['charged_back', 'payment.disputed'],
    ]) {
      const event = await payment('1001', { status, status_detail: 'reimbursed' })
      assert.deepEqual(
        [event.type, event.data],
        [
          type,
          {
            disputeId: `1001:${status}`,
            paymentId: '1001',
            amount: 12990,
            currency: 'BRL',
            reason: 'reimbursed',
            actionableUntil: null,
            externalReference: 'order-1',
          },
        ]
      )
    }
    const chargeback = {
      id: 'cb1',
      payments: [1001],
      amount: 129.9,
      currency: 'BRL',
      reason: 'fraud',
      date_documentation_deadline: '2026-12-01T10:00:00.000-03:00',
      date_last_updated: '2026-11-20T10:00:00.000-03:00',
    }
    const data = {
      disputeId: 'cb1',
      paymentId: '1001',
      amount: 12990,
      currency: 'BRL',
      reason: 'fraud',
      actionableUntil: '2026-12-01T13:00:00.000Z',
    }
    for (const [topic, coverage, type] of [
      ['topic_chargebacks_wh', false, 'payment.disputed'],
      ['chargebacks', true, 'payment.dispute_closed'],
    ] as const) {
      api.set('/v1/chargebacks/cb1', { ...chargeback, coverage_applied: coverage })
      const event = await deliver({ dataId: 'cb1', body: { topic, data: { id: 'cb1' } } })
      assert.deepEqual(
        [event.id, event.occurredAt, event.type, event.data],
        [
          'mercadopago:chargeback:cb1:2026-11-20T10:00:00.000-03:00',
          '2026-11-20T13:00:00.000Z',
          type,
          coverage ? { ...data, outcome: 'won' } : data,
        ]
      )
    }
    assert.equal(api.requests.at(-1)!.url, '/v1/chargebacks/cb1')
    api.set('/v1/chargebacks/cb2', { ...chargeback, id: 'cb2', payments: undefined })
    await assert.rejects(
      () => deliver({ dataId: 'cb2', body: { topic: 'chargebacks' } }),
      'chargeback payment is missing'
    )
  })

  test('subscriptions: created, updated, and cancelled whatever the action', async ({ assert }) => {
    const { api, deliver } = await setup()
    const preapproval = {
      id: 'pre1',
      status: 'authorized',
      payer_id: 99,
      preapproval_plan_id: 'plan1',
      next_payment_date: '2026-12-20T10:00:00.000-03:00',
      external_reference: 'order-s',
      last_modified: '2026-11-20T10:00:00.000-03:00',
    }
    const cases: [string, string, string, string | null][] = [
      ['created', 'authorized', 'subscription.created', null],
      ['updated', 'paused', 'subscription.updated', null],
      ['created', 'cancelled', 'subscription.canceled', '2026-11-20T13:00:00.000Z'],
    ]
    for (const [action, status, type, canceledAt] of cases) {
      api.set('/preapproval/pre1', { ...preapproval, status })
      const body = { type: 'subscription_preapproval', action, data: { id: 'pre1' } }
      const event = await deliver({ dataId: 'pre1', body })
      assert.deepEqual(
        [event.id, event.type, event.data],
        [
          `mercadopago:preapproval:pre1:${status}:2026-11-20T10:00:00.000-03:00`,
          type,
          {
            subscriptionId: 'pre1',
            customerId: '99',
            status,
            planId: 'plan1',
            currentPeriodEnd: '2026-12-20T13:00:00.000Z',
            canceledAt,
            externalReference: 'order-s',
          },
        ]
      )
    }
    api.set('/preapproval/pre2', { id: 'pre2' })
    const bare = await deliver({
      dataId: 'pre2',
      body: { type: 'subscription_preapproval', data: { id: 'pre2' } },
    })
    assert.deepEqual(
      [bare.id, bare.type, (bare.data as any).status],
      ['mercadopago:preapproval:pre2::-', 'subscription.updated', undefined]
    )
  })

  test('other topics pass through without reading anything', async ({ assert }) => {
    const { api, deliver } = await setup({ accessToken: undefined })
    const body = {
      id: 555,
      type: 'Merchant_Order',
      date_created: '2026-11-20T10:00:00.000-03:00',
      data: { id: 'mo1' },
    }
    assert.deepEqual(await deliver({ dataId: 'mo1', body }), {
      provider: 'mercadopago',
      raw: { notification: body, resource: null },
      id: 'mercadopago:Merchant_Order:mo1:555',
      type: 'merchant_order',
      occurredAt: '2026-11-20T13:00:00.000Z',
      data: { id: 'mo1' },
    })
    const byRequest = await deliver({
      dataId: 'mo2',
      requestId: 'req-2',
      body: { topic: 'merchant_order' },
    })
    assert.deepEqual([byRequest.id, byRequest.data], ['mercadopago:merchant_order:mo2:req-2', {}])
    const bare = await deliver({ dataId: 'mo3', requestId: '', body: { topic: 'merchant_order' } })
    assert.equal(bare.id, 'mercadopago:merchant_order:mo3:-')
    assert.lengthOf(api.requests, 0)
  })
})
