import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { AbacatePayDriver } from '../../src/payments/drivers/abacatepay.ts'
import { AsaasDriver } from '../../src/payments/drivers/asaas.ts'
import type { WebhookEvent } from '../../src/payments/types.ts'

/**
 * What the AbacatePay and Asaas drivers map a verified delivery to, field by
 * field, as docs/payments.md's tables say. Deliveries are signed here from
 * the gateways' documented rules, never with Atrium's helpers. Database free.
 */

const abacatepay = new AbacatePayDriver({ webhookSecret: 'url-secret', publicKey: 'hmac-key' })

/** The base64 HMAC-SHA256 of the raw body keyed with the public key, and the URL secret */
function abacate(body: Record<string, unknown>): WebhookEvent<any> {
  const raw = JSON.stringify(body)
  const signature = createHmac('sha256', 'hmac-key').update(raw).digest('base64')
  return abacatepay.parse(
    {
      rawBody: Buffer.from(raw),
      headers: { 'x-webhook-signature': signature },
      query: { webhookSecret: 'url-secret' },
    },
    'abacate'
  )
}

const asaas = new AsaasDriver({ webhookToken: 'asaas-token' })

function asaasEvent(body: Record<string, unknown>): WebhookEvent<any> {
  return asaas.parse(
    {
      rawBody: Buffer.from(JSON.stringify(body)),
      headers: { 'asaas-access-token': 'asaas-token' },
      query: {},
    },
    'asaas-br'
  )
}

const BILLING = {
  id: 'bill_1',
  amount: 4200,
  customer: { id: 'cust_1' },
  metadata: { externalReference: 'order-1' },
}
const PAYMENT_DATA = {
  paymentId: 'bill_1',
  amount: 4200,
  currency: 'BRL',
  customerId: 'cust_1',
  externalReference: 'order-1',
}

test.group('AbacatePay mapping', () => {
  test('each documented event name, in its billing, checkout and transparent forms', ({
    assert,
  }) => {
    const expected: Record<string, [string, Record<string, unknown>]> = {
      paid: ['payment.succeeded', { ...PAYMENT_DATA, status: 'paid' }],
      completed: ['payment.succeeded', { ...PAYMENT_DATA, status: 'paid' }],
      failed: ['payment.failed', { ...PAYMENT_DATA, status: 'failed' }],
      refunded: ['payment.refunded', PAYMENT_DATA],
      disputed: [
        'payment.disputed',
        {
          disputeId: 'bill_1:dispute',
          paymentId: 'bill_1',
          amount: 4200,
          currency: 'BRL',
          externalReference: 'order-1',
        },
      ],
    }
    const names = [
      'billing.paid',
      'checkout.completed',
      'transparent.completed',
      ...['billing', 'checkout', 'transparent'].flatMap((form) =>
        ['refunded', 'disputed', 'failed'].map((what) => `${form}.${what}`)
      ),
    ]
    for (const name of names) {
      const form = name.split('.')[0]
      const event = abacate({ id: `log_${name}`, event: name, data: { [form]: BILLING } })
      const [type, data] = expected[name.split('.')[1]]
      assert.deepEqual(
        [event.id, event.type, event.provider, event.occurredAt, event.data],
        [`log_${name}`, type, 'abacate', null, data],
        name
      )
      assert.equal((event.raw as any).event, name)
    }
  })

  test('the billing may sit under pixQrCode; customer id and reference have fallbacks', ({
    assert,
  }) => {
    const event = abacate({
      id: 'log_2',
      event: 'billing.paid',
      data: {
        billing: 'not an object',
        pixQrCode: { id: 'pix_1', customerId: 'cust_2', metadata: { external_reference: 'o-2' } },
      },
    })
    assert.deepEqual(event.data, {
      paymentId: 'pix_1',
      amount: undefined,
      currency: 'BRL',
      customerId: 'cust_2',
      externalReference: 'o-2',
      status: 'paid',
    })
    const byExternalId = abacate({
      id: 'log_3',
      event: 'billing.paid',
      data: { billing: { id: 'b', amount: '100', externalId: 'ext-3', metadata: 'x' } },
    })
    assert.deepEqual(
      [byExternalId.data.amount, byExternalId.data.customerId, byExternalId.data.externalReference],
      [100, null, 'ext-3']
    )
  })

  test('other events pass through lowercased with the data; malformed ones are refused', ({
    assert,
  }) => {
    const withdraw = abacate({ id: 'log_4', event: 'Withdraw.Done', data: { amount: 5 } })
    assert.deepEqual([withdraw.type, withdraw.data], ['withdraw.done', { amount: 5 }])
    const unknown = abacate({ id: 'log_5', event: 'billing.created', data: { billing: BILLING } })
    assert.deepEqual([unknown.type, unknown.data], ['billing.created', { billing: BILLING }])
    const noData = abacate({ id: 'log_6', event: 'billing.paid', data: [BILLING] })
    assert.deepEqual([noData.type, noData.data], ['billing.paid', {}])
    assert.throws(() => abacate({ event: 'billing.paid' }), /^event id is missing$/)
    assert.throws(() => abacate({ id: 'l' }), /^event is missing$/)
    assert.throws(
      () => abacate({ id: 'l', event: 'billing.paid', data: { billing: { amount: 1 } } }),
      /^billing id is missing$/
    )
    assert.throws(
      () =>
        abacate({ id: 'l', event: 'billing.paid', data: { billing: { id: 'b', amount: 1.5 } } }),
      /^amount 1.5 is not an integer in minor units$/
    )
  })

  test('payments:webhook lists the events to enable', ({ assert }) => {
    assert.sameMembers(abacatepay.subscribedEvents, [
      'billing.paid',
      'billing.refunded',
      'billing.disputed',
    ])
  })
})

const ASAAS_PAYMENT = {
  id: 'pay_1',
  customer: 'cus_1',
  value: 129.9,
  externalReference: 'order-1',
  status: 'RECEIVED',
}
const COMMON = {
  paymentId: 'pay_1',
  amount: 12990,
  currency: 'BRL',
  customerId: 'cus_1',
  externalReference: 'order-1',
}

test.group('Asaas mapping', () => {
  test('payments: decimal reais become cents; success, failure and refund names', ({ assert }) => {
    const paid = asaasEvent({
      id: 'evt_1',
      event: 'PAYMENT_RECEIVED',
      dateCreated: '2024-06-12T16:45:03Z',
      payment: { ...ASAAS_PAYMENT, paymentDate: '2024-06-12', confirmedDate: '2024-06-11' },
    })
    assert.deepEqual(
      [paid.id, paid.type, paid.provider, paid.occurredAt],
      ['evt_1', 'payment.succeeded', 'asaas-br', '2024-06-12T16:45:03.000Z']
    )
    assert.deepEqual(paid.data, { ...COMMON, status: 'paid', paidAt: '2024-06-12T00:00:00.000Z' })
    const paidAt = (payment: Record<string, unknown>) =>
      asaasEvent({ id: 'e', event: 'PAYMENT_CONFIRMED', payment: { ...ASAAS_PAYMENT, ...payment } })
        .data.paidAt
    assert.equal(
      paidAt({ clientPaymentDate: '2024-06-10', paymentDate: '2024-06-12' }),
      '2024-06-10T00:00:00.000Z'
    )
    assert.equal(paidAt({ confirmedDate: '2024-06-11' }), '2024-06-11T00:00:00.000Z')
    assert.isNull(paidAt({}))
    for (const name of [
      'PAYMENT_OVERDUE',
      'PAYMENT_CREDIT_CARD_CAPTURE_REFUSED',
      'PAYMENT_REPROVED_BY_RISK_ANALYSIS',
    ]) {
      const failed = asaasEvent({ id: 'e', event: name, payment: ASAAS_PAYMENT })
      assert.deepEqual(
        [failed.type, failed.data],
        ['payment.failed', { ...COMMON, status: 'failed' }]
      )
    }
    const refunded = asaasEvent({ id: 'e', event: 'PAYMENT_REFUNDED', payment: ASAAS_PAYMENT })
    assert.deepEqual([refunded.type, refunded.data], ['payment.refunded', COMMON])
    assert.isNull(
      asaasEvent({ id: 'e', event: 'PAYMENT_REFUNDED', payment: ASAAS_PAYMENT }).occurredAt
    )
  })

  test('a partial refund lists each refund in cents, named by its id or its position', ({
    assert,
  }) => {
    const event = asaasEvent({
      id: 'e',
      event: 'PAYMENT_PARTIALLY_REFUNDED',
      payment: { ...ASAAS_PAYMENT, refunds: [{ id: 'rf_1', value: 10.5 }, 'x', { value: '2' }] },
    })
    assert.equal(event.type, 'payment.updated')
    assert.deepEqual(event.data, {
      ...COMMON,
      refunds: [
        { id: 'rf_1', amount: 1050 },
        { id: 'pay_1:refund:1', amount: 200 },
      ],
    })
    const none = asaasEvent({
      id: 'e',
      event: 'PAYMENT_PARTIALLY_REFUNDED',
      payment: { ...ASAAS_PAYMENT, refunds: { id: 'rf' } },
    })
    assert.deepEqual(none.data.refunds, [])
  })

  test('PAYMENT_UPDATED maps the payment status', ({ assert }) => {
    const statuses = {
      PENDING: 'pending',
      AWAITING_RISK_ANALYSIS: 'pending',
      CONFIRMED: 'paid',
      RECEIVED: 'paid',
      RECEIVED_IN_CASH: 'paid',
      OVERDUE: 'failed',
      REFUNDED: 'refunded',
      DUNNING_REQUESTED: undefined,
    }
    for (const [status, canonical] of Object.entries(statuses)) {
      const event = asaasEvent({
        id: 'e',
        event: 'PAYMENT_UPDATED',
        payment: { ...ASAAS_PAYMENT, status },
      })
      assert.deepEqual(
        [event.type, event.data],
        ['payment.updated', { ...COMMON, status: canonical }]
      )
    }
  })

  test('a chargeback request disputes the payment; its follow-ups pass through', ({ assert }) => {
    const payment = { ...ASAAS_PAYMENT, chargeback: { reason: 'ABSENCE_OF_PRINT' } }
    const dispute = {
      disputeId: 'pay_1:chargeback',
      paymentId: 'pay_1',
      amount: 12990,
      currency: 'BRL',
      reason: 'ABSENCE_OF_PRINT',
      actionableUntil: null,
      externalReference: 'order-1',
    }
    const requested = asaasEvent({ id: 'e', event: 'PAYMENT_CHARGEBACK_REQUESTED', payment })
    assert.deepEqual([requested.type, requested.data], ['payment.disputed', dispute])
    for (const name of ['PAYMENT_CHARGEBACK_DISPUTE', 'PAYMENT_AWAITING_CHARGEBACK_REVERSAL']) {
      const event = asaasEvent({ id: 'e', event: name, payment: ASAAS_PAYMENT })
      assert.deepEqual([event.type, event.data], [name.toLowerCase(), { ...dispute, reason: null }])
    }
  })

  test('subscriptions: created, updated, deleted and inactivated; others pass through', ({
    assert,
  }) => {
    const subscription = {
      id: 'sub_1',
      customer: 'cus_1',
      status: 'ACTIVE',
      nextDueDate: '2024-07-12',
      externalReference: 'acct-1',
    }
    const data = {
      subscriptionId: 'sub_1',
      customerId: 'cus_1',
      status: 'active',
      planId: null,
      currentPeriodEnd: '2024-07-12T00:00:00.000Z',
      externalReference: 'acct-1',
    }
    const types = {
      SUBSCRIPTION_CREATED: ['subscription.created', data],
      SUBSCRIPTION_UPDATED: ['subscription.updated', data],
      SUBSCRIPTION_DELETED: ['subscription.canceled', { ...data, status: 'canceled' }],
      SUBSCRIPTION_INACTIVATED: ['subscription.canceled', { ...data, status: 'canceled' }],
      SUBSCRIPTION_SPLIT_DIVERGENCE_BLOCK: ['subscription_split_divergence_block', data],
    }
    for (const [name, expected] of Object.entries(types)) {
      const event = asaasEvent({ id: 'e', event: name, subscription })
      assert.deepEqual([event.type, event.data], expected, name)
    }
    const bare = asaasEvent({ id: 'e', event: 'SUBSCRIPTION_UPDATED', subscription: { id: 's' } })
    assert.deepEqual(
      [
        bare.data.customerId,
        bare.data.status,
        bare.data.currentPeriodEnd,
        bare.data.externalReference,
      ],
      [null, undefined, null, null]
    )
    // Without a subscription object the delivery passes through whole
    const body = { id: 'e', event: 'SUBSCRIPTION_CREATED', subscription: 'sub_1' }
    assert.deepEqual([asaasEvent(body).type, asaasEvent(body).data], ['subscription_created', body])
    // A payment event naming a subscription is still a payment event
    const paid = asaasEvent({
      id: 'e',
      event: 'PAYMENT_RECEIVED',
      subscription,
      payment: ASAAS_PAYMENT,
    })
    assert.equal(paid.type, 'payment.succeeded')
  })

  test('unknown names pass through lowercased; malformed deliveries are refused by name', ({
    assert,
  }) => {
    const anticipated = asaasEvent({
      id: 'e',
      event: 'PAYMENT_ANTICIPATED',
      payment: ASAAS_PAYMENT,
    })
    assert.deepEqual([anticipated.type, anticipated.data], ['payment_anticipated', COMMON])
    const transfer = { id: 'e', event: 'TRANSFER_DONE', transfer: { id: 't' } }
    assert.deepEqual(
      [asaasEvent(transfer).type, asaasEvent(transfer).data],
      ['transfer_done', transfer]
    )
    assert.throws(() => asaasEvent({ event: 'PAYMENT_RECEIVED' }), /^event id is missing$/)
    assert.throws(() => asaasEvent({ id: 'e' }), /^event is missing$/)
    assert.throws(
      () => asaasEvent({ id: 'e', event: 'PAYMENT_RECEIVED', payment: { value: 1 } }),
      /^payment id is missing$/
    )
    assert.throws(
      () =>
        asaasEvent({ id: 'e', event: 'SUBSCRIPTION_CREATED', subscription: { status: 'ACTIVE' } }),
      /^subscription id is missing$/
    )
    // Reais have two decimals: a third one is refused, never rounded
    assert.throws(
      () => asaasEvent({ id: 'e', event: 'PAYMENT_RECEIVED', payment: { id: 'p', value: 1.005 } }),
      /^amount 1.005 has more decimals than BRL allows$/
    )
    assert.throws(
      () =>
        asaasEvent({
          id: 'e',
          event: 'PAYMENT_PARTIALLY_REFUNDED',
          payment: { ...ASAAS_PAYMENT, refunds: [{ id: 'r', value: '0.001' }] },
        }),
      /^amount 0.001 has more decimals than BRL allows$/
    )
  })

  test('payments:webhook lists every event the table maps', ({ assert }) => {
    assert.sameMembers(asaas.subscribedEvents, [
      'PAYMENT_CONFIRMED',
      'PAYMENT_RECEIVED',
      'PAYMENT_OVERDUE',
      'PAYMENT_CREDIT_CARD_CAPTURE_REFUSED',
      'PAYMENT_REPROVED_BY_RISK_ANALYSIS',
      'PAYMENT_REFUNDED',
      'PAYMENT_PARTIALLY_REFUNDED',
      'PAYMENT_UPDATED',
      'PAYMENT_CHARGEBACK_REQUESTED',
      'PAYMENT_CHARGEBACK_DISPUTE',
      'PAYMENT_AWAITING_CHARGEBACK_REVERSAL',
      'SUBSCRIPTION_CREATED',
      'SUBSCRIPTION_UPDATED',
      'SUBSCRIPTION_DELETED',
      'SUBSCRIPTION_INACTIVATED',
    ])
  })
})
