/**
 * Paddle Billing, database-free: deliveries signed with the documented
 * formula written out here (hex HMAC-SHA256 of `<ts>:<raw body>`), never with
 * Atrium's own signer, and each event compared whole with docs/payments.md.
 */
import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { PaddleDriver } from '../../src/payments/drivers/paddle.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'

const SECRET = 'pdl_ntfset_01independent_secret'
const NOW = '2026-11-20T10:00:00.000Z'

function paddleRequest(body: string, signature?: (ts: number, h1: string) => string) {
  const ts = Math.floor(Date.now() / 1000)
  const h1 = createHmac('sha256', SECRET).update(`${ts}:${body}`).digest('hex')
  const value = signature ? signature(ts, h1) : `ts=${ts};h1=${h1}`
  return { rawBody: Buffer.from(body), headers: { 'paddle-signature': value }, query: {} }
}

async function deliver(payload: unknown, driver = new PaddleDriver({ webhookSecret: SECRET })) {
  const request: WebhookRequest = paddleRequest(JSON.stringify(payload))
  await driver.confirm(request)
  return driver.parse(request, 'paddle-eu')
}

const event = (type: string, data: unknown) => ({
  event_id: 'evt_01',
  event_type: type,
  occurred_at: '2026-11-20T10:00:00Z',
  data,
})

const transaction = (extra: Record<string, unknown> = {}) => ({
  id: 'txn_01',
  customer_id: 'ctm_01',
  currency_code: 'usd',
  custom_data: { externalReference: 'order-1' },
  details: { totals: { total: '1000', grand_total: '1130' } },
  billed_at: '2026-11-20T09:00:00Z',
  updated_at: '2026-11-20T09:30:00Z',
  ...extra,
})

const adjustment = (action: string, extra: Record<string, unknown> = {}) => ({
  id: 'adj_01',
  action,
  transaction_id: 'txn_01',
  customer_id: 'ctm_01',
  reason: 'requested_by_customer',
  status: 'approved',
  type: 'partial',
  currency_code: 'EUR',
  totals: { total: '300', currency_code: 'USD' },
  ...extra,
})

test.group('Payments Paddle: each event, whole', () => {
  test('transaction.completed is payment.succeeded with grand_total in minor units', async ({
    assert,
  }) => {
    const payload = event('transaction.completed', transaction())
    assert.deepEqual(await deliver(payload), {
      id: 'evt_01',
      provider: 'paddle-eu',
      raw: payload,
      occurredAt: NOW,
      type: 'payment.succeeded',
      data: {
        paymentId: 'txn_01',
        amount: 1130,
        currency: 'USD',
        status: 'paid',
        paidAt: '2026-11-20T09:00:00.000Z',
        customerId: 'ctm_01',
        externalReference: 'order-1',
      },
    })
    // Without billed_at, the update time; without grand_total, the total
    const fallback = await deliver(
      event(
        'transaction.completed',
        transaction({ billed_at: undefined, details: { totals: { total: '990' } } })
      )
    )
    assert.include(fallback.data as any, { amount: 990, paidAt: '2026-11-20T09:30:00.000Z' })
  })

  test('transaction.payment_failed is payment.failed with no paidAt', async ({ assert }) => {
    const failed = await deliver(
      event('transaction.payment_failed', transaction({ currency_code: undefined }))
    )
    assert.equal(failed.type, 'payment.failed')
    assert.deepEqual(failed.data, {
      paymentId: 'txn_01',
      amount: 1130,
      currency: undefined,
      status: 'failed',
      paidAt: null,
      customerId: 'ctm_01',
      externalReference: 'order-1',
    })
  })

  test('externalReference: externalReference, else external_reference, else orderId', async ({
    assert,
  }) => {
    const cases: [unknown, string | null][] = [
      [{ externalReference: 'a', external_reference: 'b', orderId: 'c' }, 'a'],
      [{ external_reference: 'b', orderId: 'c' }, 'b'],
      [{ orderId: 'c' }, 'c'],
      [{}, null],
      ['not-an-object', null],
    ]
    for (const [custom, expected] of cases) {
      const paid = await deliver(
        event('transaction.completed', transaction({ custom_data: custom }))
      )
      assert.strictEqual((paid.data as any).externalReference, expected, JSON.stringify(custom))
    }
  })

  test('subscription events map as documented, canceled carries status canceled', async ({
    assert,
  }) => {
    const subscription = {
      id: 'sub_01',
      status: 'active',
      customer_id: 'ctm_01',
      items: [{ price: { id: 'pri_01' } }],
      current_billing_period: { ends_at: '2026-12-20T10:00:00Z' },
      canceled_at: '2026-11-21T10:00:00Z',
      custom_data: { external_reference: 'order-9' },
    }
    const expected: [string, string][] = [
      ['subscription.created', 'subscription.created'],
      ['subscription.activated', 'subscription.updated'],
      ['subscription.updated', 'subscription.updated'],
      ['subscription.paused', 'subscription.updated'],
      ['subscription.resumed', 'subscription.updated'],
      ['subscription.past_due', 'subscription.updated'],
      ['subscription.trialing', 'subscription.updated'],
      ['subscription.canceled', 'subscription.canceled'],
    ]
    for (const [type, canonical] of expected) {
      const mapped = await deliver(event(type, subscription))
      assert.equal(mapped.type, canonical, type)
      assert.deepEqual(mapped.data, {
        subscriptionId: 'sub_01',
        customerId: 'ctm_01',
        status: canonical === 'subscription.canceled' ? 'canceled' : 'active',
        planId: 'pri_01',
        currentPeriodEnd: '2026-12-20T10:00:00.000Z',
        canceledAt: '2026-11-21T10:00:00.000Z',
        externalReference: 'order-9',
      })
    }
    for (const items of [undefined, [], [{}], [{ price: {} }]]) {
      const bare = await deliver(event('subscription.updated', { id: 'sub_02', items }))
      assert.deepEqual(bare.data, {
        subscriptionId: 'sub_02',
        customerId: null,
        status: null,
        planId: null,
        currentPeriodEnd: null,
        canceledAt: null,
        externalReference: null,
      })
    }
    // A transaction without totals has no amount: refused by name
    await assert.rejects(
      () => deliver(event('transaction.completed', { id: 'txn_02' })),
      'amount undefined is not an integer in minor units'
    )
  })

  test('an approved refund adjustment: full is payment.refunded, partial payment.updated', async ({
    assert,
  }) => {
    const refund = {
      paymentId: 'txn_01',
      currency: 'USD',
      refunds: [{ id: 'adj_01', amount: 300 }],
      customerId: 'ctm_01',
    }
    const full = await deliver(event('adjustment.updated', adjustment('refund', { type: 'full' })))
    assert.deepEqual([full.type, full.data], ['payment.refunded', refund])
    const partial = await deliver(event('adjustment.created', adjustment('refund')))
    assert.deepEqual([partial.type, partial.data], ['payment.updated', refund])
    // The adjustment's own currency when its totals name none
    const own = await deliver(
      event('adjustment.created', adjustment('refund', { totals: { total: 300 } }))
    )
    assert.equal((own.data as any).currency, 'EUR')
    // A refund Paddle has not approved yet is passed through under its own name
    const pendingPayload = adjustment('refund', { status: 'pending_approval' })
    const pending = await deliver(event('adjustment.created', pendingPayload))
    assert.deepEqual([pending.type, pending.data], ['adjustment.created', pendingPayload])
  })

  test('chargeback adjustments: warning, disputed, and reversed is closed as won', async ({
    assert,
  }) => {
    const dispute = {
      disputeId: 'txn_01:chargeback',
      paymentId: 'txn_01',
      amount: 300,
      currency: 'USD',
      reason: 'requested_by_customer',
      actionableUntil: null,
    }
    const warning = await deliver(event('adjustment.created', adjustment('chargeback_warning')))
    assert.deepEqual([warning.type, warning.data], ['payment.dispute_warning', dispute])
    const disputed = await deliver(event('adjustment.created', adjustment('chargeback')))
    assert.deepEqual([disputed.type, disputed.data], ['payment.disputed', dispute])
    const reversed = await deliver(event('adjustment.updated', adjustment('chargeback_reverse')))
    assert.deepEqual(
      [reversed.type, reversed.data],
      ['payment.dispute_closed', { ...dispute, outcome: 'won' }]
    )
    // No totals: an amount of 0, no currency
    const bare = await deliver(
      event('adjustment.created', adjustment('chargeback', { totals: undefined, currency_code: 1 }))
    )
    assert.deepInclude(bare.data as any, { amount: 0, currency: '1' })
    const noCurrency = await deliver(
      event('adjustment.created', adjustment('chargeback', { totals: {}, currency_code: null }))
    )
    assert.isUndefined((noCurrency.data as any).currency)
    const creditPayload = adjustment('credit')
    const credit = await deliver(event('adjustment.updated', creditPayload))
    assert.deepEqual([credit.type, credit.data], ['adjustment.updated', creditPayload])
    const noAction = await deliver(event('adjustment.updated', adjustment('', { action: null })))
    assert.equal(noAction.type, 'adjustment.updated')
  })

  test('any other event is passed through under its lowercased name', async ({ assert }) => {
    const passthrough = await deliver(event('Customer.Created', { id: 'ctm_1' }))
    assert.deepEqual([passthrough.type, passthrough.data], ['customer.created', { id: 'ctm_1' }])
  })
})

test.group('Payments Paddle: malformed deliveries are refused by name', () => {
  test('the signature header is read as ts and h1 in either order', async ({ assert }) => {
    const driver = new PaddleDriver({ webhookSecret: SECRET })
    const body = JSON.stringify(event('transaction.completed', transaction()))
    const request = paddleRequest(body, (ts, h1) => `h1=${h1};ts=${ts}`)
    await driver.confirm(request)
    assert.equal(driver.parse(request, 'paddle').type, 'payment.succeeded')
  })

  test('each malformed signature header is refused with its reason', async ({ assert }) => {
    const driver = new PaddleDriver({ webhookSecret: SECRET })
    const body = JSON.stringify(event('transaction.completed', transaction()))
    const malformed = 'Paddle-Signature is not "ts=<unix>;h1=<hex>"'
    const forms: ((ts: number, h1: string) => string)[] = [
      (_ts, h1) => `h1=${h1}`,
      (ts) => `ts=${ts}`,
      (ts, h1) => `ts=${ts}x;h1=${h1}`,
      (ts, h1) => `ts=x${ts};h1=${h1}`,
      (_ts, h1) => `ts=1234567890123;h1=${h1}`,
      (ts, h1) => `ts${ts};h1=${h1}`,
      (ts) => `ts=${ts};h1=`,
    ]
    const cases: [(ts: number, h1: string) => string, string][] = forms.map((form) => [
      form,
      malformed,
    ])
    cases.push([
      (ts, h1) => `ts=${ts};h1=${h1.slice(1)}0`,
      'Paddle-Signature does not match the body',
    ])
    cases.push([(ts, h1) => `ts=${ts + 1};h1=${h1}`, 'Paddle-Signature does not match the body'])
    for (const [form, message] of cases) {
      await assert.rejects(() => driver.confirm(paddleRequest(body, form)), message)
    }
  })

  test('a header the SDK cannot read is refused though its own parse matches', async ({
    assert,
  }) => {
    // Atrium trims the parts; the SDK reads " h1" as another key, and what it refuses is never recorded
    const driver = new PaddleDriver({ webhookSecret: SECRET })
    const body = JSON.stringify(event('transaction.completed', transaction()))
    await assert.rejects(
      () => driver.confirm(paddleRequest(body, (ts, h1) => `ts=${ts}; h1=${h1}`)),
      'Paddle-Signature timestamp is outside the SDK tolerance (5 seconds)'
    )
  })

  test('a signature older than the SDK tolerance is refused after the bytes match', async ({
    assert,
  }) => {
    const driver = new PaddleDriver({ webhookSecret: SECRET })
    const body = JSON.stringify(event('transaction.completed', transaction()))
    const ts = Math.floor(Date.now() / 1000) - 60
    const h1 = createHmac('sha256', SECRET).update(`${ts}:${body}`).digest('hex')
    await assert.rejects(
      () => driver.confirm(paddleRequest(body, () => `ts=${ts};h1=${h1}`)),
      'Paddle-Signature timestamp is outside the SDK tolerance (5 seconds)'
    )
  })

  test('no secret, no header, no JSON, no data, no type or id: each refused by name', async ({
    assert,
  }) => {
    const request = paddleRequest('{}')
    await assert.rejects(() => new PaddleDriver({}).confirm(request), 'paddle has no webhookSecret')
    const driver = new PaddleDriver({ webhookSecret: SECRET })
    await assert.rejects(
      () => driver.confirm({ ...request, headers: {} }),
      'missing Paddle-Signature header'
    )
    await assert.rejects(() => driver.confirm(paddleRequest('not json')), 'body is not valid JSON')
    assert.throws(
      () => driver.parse(paddleRequest('{}'), 'paddle'),
      'Paddle delivery was not verified: call confirm(request) before parse'
    )
    const refusals: [unknown, string][] = [
      [{ event_id: 'e', event_type: 'transaction.completed' }, 'Paddle event has no data'],
      [
        { event_id: 'e', event_type: 'transaction.completed', data: [] },
        'Paddle event has no data',
      ],
      [{ event_id: 'e', data: {} }, 'event_type is missing'],
      [{ event_type: 'customer.created', data: {} }, 'event_id is missing'],
      [event('transaction.completed', { details: {} }), 'transaction id is missing'],
      [event('adjustment.created', { id: 'a' }), 'adjustment transaction_id is missing'],
      [event('adjustment.created', { transaction_id: 't' }), 'adjustment id is missing'],
      [event('subscription.created', {}), 'subscription id is missing'],
    ]
    for (const [payload, message] of refusals) {
      const signed = paddleRequest(JSON.stringify(payload))
      await driver.confirm(signed)
      assert.throws(() => driver.parse(signed, 'paddle'), message)
    }
  })
})
