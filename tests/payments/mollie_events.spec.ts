/**
 * Mollie, database-free: next-gen deliveries signed with the documented
 * formula written out here (`sha256=<hex HMAC-SHA256 of the raw body>`), and
 * classic `id=tr_...` deliveries answered by a loopback Payments API; each
 * event compared whole with docs/payments.md.
 */
import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { MollieDriver } from '../../src/payments/drivers/mollie.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { httpsStandIn, mollieStandIn } from './sdk_gateway_stand_ins.ts'

const SECRET = 'mollie_independent_signing_secret'
const API_KEY = 'test_independentMollieKey000000000'
const NOW = '2026-11-20T10:00:00.000Z'

const hmac = (body: string, key = SECRET) => createHmac('sha256', key).update(body).digest('hex')

function signedRequest(body: string, signature = `sha256=${hmac(body)}`): WebhookRequest {
  return { rawBody: Buffer.from(body), headers: { 'x-mollie-signature': signature }, query: {} }
}

const classicRequest = (body: string): WebhookRequest => ({
  rawBody: Buffer.from(body),
  headers: {},
  query: {},
})

async function confirmed(driver: MollieDriver, request: WebhookRequest) {
  await driver.confirm(request)
  return driver.parse(request, 'mollie')
}

const linkPaid = {
  resource: 'event',
  id: 'event_01',
  type: 'payment-link.paid',
  entityId: 'pl_01',
  createdAt: '2026-11-20T10:00:00Z',
  _embedded: {
    entity: {
      id: 'pl_01',
      description: 'Bicycle tires',
      amount: { currency: 'eur', value: '11.30' },
      paidAt: '2026-11-20T09:00:00Z',
      customerId: 'cst_01',
      metadata: { externalReference: 'order-1' },
    },
  },
}

test.group('Payments Mollie: next-gen signed events', () => {
  test('payment-link.paid is payment.succeeded for the link id', async ({ assert }) => {
    const driver = new MollieDriver({ webhookSecret: SECRET })
    assert.deepEqual(await confirmed(driver, signedRequest(JSON.stringify(linkPaid))), {
      id: 'event_01',
      provider: 'mollie',
      raw: linkPaid,
      occurredAt: NOW,
      type: 'payment.succeeded',
      data: {
        paymentId: 'pl_01',
        amount: 1130,
        currency: 'EUR',
        status: 'paid',
        paidAt: '2026-11-20T09:00:00.000Z',
        customerId: 'cst_01',
        externalReference: 'order-1',
      },
    })
    const entity = { ...linkPaid._embedded.entity, metadata: { external_reference: 'order-2' } }
    const snake = { ...linkPaid, entityId: undefined, _embedded: { entity } }
    const event = await confirmed(driver, signedRequest(JSON.stringify(snake)))
    assert.deepInclude(event.data as any, { paymentId: 'pl_01', externalReference: 'order-2' })
    const described = { ...linkPaid, _embedded: { entity: { ...entity, metadata: null } } }
    const byDescription = await confirmed(driver, signedRequest(JSON.stringify(described)))
    assert.equal((byDescription.data as any).externalReference, 'Bicycle tires')
  })

  test('other events, or a link paid without its entity, pass through', async ({ assert }) => {
    const driver = new MollieDriver({ webhookSecret: SECRET })
    const bare = { id: 'event_02', type: 'payment-link.paid', createdAt: 'not a date' }
    const noEntity = await confirmed(driver, signedRequest(JSON.stringify(bare)))
    assert.deepEqual(noEntity, {
      id: 'event_02',
      provider: 'mollie',
      raw: bare,
      occurredAt: null,
      type: 'payment-link.paid',
      data: bare,
    })
    const other = { ...linkPaid, type: 'Sales-Invoice.Paid' }
    const passed = await confirmed(driver, signedRequest(JSON.stringify(other)))
    assert.deepEqual([passed.type, passed.data], ['sales-invoice.paid', linkPaid._embedded.entity])
  })

  test('during a rotation either of two signatures may match, in either hex case', async ({
    assert,
  }) => {
    const driver = new MollieDriver({ webhookSecret: SECRET })
    const body = JSON.stringify(linkPaid)
    for (const signature of [
      `sha256=${hmac(body, 'old-secret')}, sha256=${hmac(body)}`,
      `sha256=${hmac(body)},sha256=${hmac(body, 'old-secret')}`,
      `sha256=${hmac(body).toUpperCase()}`,
      hmac(body),
    ]) {
      const event = await confirmed(driver, signedRequest(body, signature))
      assert.equal(event.type, 'payment.succeeded')
    }
  })

  test('a wrong signature, no secret, no JSON, no id or type: each refused', async ({ assert }) => {
    const driver = new MollieDriver({ webhookSecret: SECRET })
    const body = JSON.stringify(linkPaid)
    const cases: [WebhookRequest, string][] = [
      [
        signedRequest(body, `sha256=${hmac(body, 'other')}`),
        'X-Mollie-Signature does not match the body',
      ],
      [signedRequest(body, 'sha256=,'), 'X-Mollie-Signature does not match the body'],
      [signedRequest('not json'), 'body is not valid JSON'],
    ]
    for (const [request, message] of cases) {
      await assert.rejects(() => driver.confirm(request), message)
    }
    await assert.rejects(
      () => new MollieDriver({}).confirm(signedRequest(body)),
      'mollie has no webhookSecret for X-Mollie-Signature'
    )
    for (const event of [{ type: 'x' }, { id: 'event_03' }, { id: '', type: 'x' }]) {
      await assert.rejects(
        () => confirmed(driver, signedRequest(JSON.stringify(event))),
        'Mollie event has no id or type'
      )
    }
    assert.throws(
      () => driver.parse(signedRequest(body), 'mollie'),
      'Mollie delivery was not verified: call confirm(request) before parse'
    )
  })
})

test.group('Payments Mollie: classic webhooks read the payment from Mollie', () => {
  const payment = (status: string, extra: Record<string, unknown> = {}) => ({
    id: 'tr_01',
    status,
    amount: { value: '11.30', currency: 'eur' },
    customerId: 'cst_01',
    metadata: { externalReference: 'order-1' },
    createdAt: '2026-11-20T08:00:00Z',
    paidAt: '2026-11-20T09:00:00Z',
    ...extra,
  })

  async function classic() {
    const api = await mollieStandIn(API_KEY)
    const driver = new MollieDriver({ apiKey: API_KEY, apiEndpoint: api.apiEndpoint })
    const deliver = async (answer: Record<string, unknown> & { id: string }) => {
      api.set(answer)
      return confirmed(driver, classicRequest(`id=${answer.id}`))
    }
    return { api, driver, deliver }
  }

  test('a paid payment is payment.succeeded; its state makes the event id', async ({ assert }) => {
    const { deliver } = await classic()
    const event = await deliver(payment('paid'))
    assert.deepInclude(event, {
      id: 'mollie:tr_01:paid:0:0',
      provider: 'mollie',
      occurredAt: '2026-11-20T09:00:00.000Z',
      type: 'payment.succeeded',
    })
    assert.equal((event.raw as any).id, 'tr_01')
    assert.deepEqual(event.data, {
      paymentId: 'tr_01',
      amount: 1130,
      currency: 'EUR',
      customerId: 'cst_01',
      externalReference: 'order-1',
      status: 'paid',
      paidAt: '2026-11-20T09:00:00.000Z',
    })
  })

  test('failed, canceled and expired fail; open, pending and authorized are pending', async ({
    assert,
  }) => {
    const { deliver } = await classic()
    const common = {
      paymentId: 'tr_01',
      amount: 1130,
      currency: 'EUR',
      customerId: 'cst_01',
      externalReference: 'order-1',
    }
    const cases: [string, string, string][] = [
      ['failed', 'payment.failed', 'failed'],
      ['canceled', 'payment.failed', 'failed'],
      ['expired', 'payment.failed', 'failed'],
      ['open', 'payment.updated', 'pending'],
      ['pending', 'payment.updated', 'pending'],
      ['authorized', 'payment.updated', 'pending'],
    ]
    for (const [status, type, canonical] of cases) {
      const event = await deliver(payment(status, { paidAt: undefined }))
      assert.deepEqual(
        [event.id, event.occurredAt, event.type, event.data],
        [
          `mollie:tr_01:${status}:0:0`,
          '2026-11-20T08:00:00.000Z',
          type,
          { ...common, status: canonical },
        ],
        status
      )
    }
  })

  test('refunds: part is payment.updated, the whole is payment.refunded', async ({ assert }) => {
    const { deliver } = await classic()
    const common = {
      paymentId: 'tr_01',
      amount: 1130,
      currency: 'EUR',
      customerId: 'cst_01',
      externalReference: 'order-1',
    }
    const cases: [string, string][] = [
      ['3.00', 'payment.updated'],
      ['11.29', 'payment.updated'],
      ['11.30', 'payment.refunded'],
    ]
    for (const [value, type] of cases) {
      const refunded = Math.round(Number(value) * 100)
      const event = await deliver(payment('paid', { amountRefunded: { value, currency: 'EUR' } }))
      assert.deepEqual(
        [event.id, event.type, event.data],
        [`mollie:tr_01:paid:${refunded}:0`, type, { ...common, refundedAmount: refunded }]
      )
    }
    // A refund of an unpaid payment is not money back
    const open = await deliver(
      payment('open', { amountRefunded: { value: '3.00', currency: 'EUR' } })
    )
    assert.equal(open.type, 'payment.updated')
    assert.equal((open.data as any).status, 'pending')
  })

  test('a chargeback is payment.disputed at once, for the amount charged back', async ({
    assert,
  }) => {
    const { deliver } = await classic()
    const event = await deliver(
      payment('paid', {
        amountRefunded: { value: '1.00', currency: 'EUR' },
        amountChargedBack: { value: '5.00', currency: 'EUR' },
      })
    )
    assert.deepEqual(
      [event.id, event.type, event.data],
      [
        'mollie:tr_01:paid:100:500',
        'payment.disputed',
        {
          disputeId: 'tr_01:chargeback',
          paymentId: 'tr_01',
          amount: 500,
          currency: 'EUR',
          reason: null,
          actionableUntil: null,
          externalReference: 'order-1',
        },
      ]
    )
    // Only a paid payment can be charged back: the status row decides otherwise
    const failed = await deliver(
      payment('failed', { amountChargedBack: { value: '5.00', currency: 'EUR' } })
    )
    assert.deepEqual([failed.id, failed.type], ['mollie:tr_01:failed:0:500', 'payment.failed'])
    const snake = await deliver(payment('paid', { metadata: { external_reference: 'order-9' } }))
    assert.equal((snake.data as any).externalReference, 'order-9')
  })

  test('a classic id is checked before Mollie is asked, and only Mollie is believed', async ({
    assert,
  }) => {
    const { api, driver } = await classic()
    const refusals: [string, string][] = [
      ['', 'missing X-Mollie-Signature header or id in the body'],
      ['id=', 'missing X-Mollie-Signature header or id in the body'],
      ['id=ord_01', 'Mollie id is not a payment id (tr_...)'],
      ['id=xtr_01', 'Mollie id is not a payment id (tr_...)'],
      ['id=tr_01!', 'Mollie id is not a payment id (tr_...)'],
      ['id=tr_', 'Mollie id is not a payment id (tr_...)'],
      [`id=tr_${'a'.repeat(65)}`, 'Mollie id is not a payment id (tr_...)'],
    ]
    for (const [body, message] of refusals) {
      await assert.rejects(() => driver.confirm(classicRequest(body)), message)
    }
    assert.lengthOf(api.requests, 0)
    await assert.rejects(
      () => driver.confirm(classicRequest('id=tr_unknown')),
      'Mollie does not confirm this payment'
    )
    await assert.rejects(
      () => new MollieDriver({}).confirm(classicRequest('id=tr_01')),
      'mollie has no apiKey to fetch the payment of a classic webhook'
    )
    api.set(payment('paid', { id: `tr_${'a'.repeat(64)}` }))
    await driver.confirm(classicRequest(`id=tr_${'a'.repeat(64)}`))
  })

  test('an answer for another payment is refused', async ({ assert }) => {
    const api = await httpsStandIn(() => ({
      body: { resource: 'payment', id: 'tr_other', status: 'paid', amount: null },
    }))
    const driver = new MollieDriver({ apiKey: API_KEY, apiEndpoint: `${api.url}/v2/` })
    await assert.rejects(
      () => driver.confirm(classicRequest('id=tr_01')),
      'Mollie answered with another payment'
    )
  })
})
