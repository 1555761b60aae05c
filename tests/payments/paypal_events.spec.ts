/**
 * PayPal, database-free: transmissions signed with the documented message
 * written out here (RSA-SHA256 of `<id>|<time>|<webhook id>|<CRC32 of the
 * body>`), never with Atrium's own signer, verified against a loopback
 * certificate host, and each event compared whole with docs/payments.md.
 */
import { createSign } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { test } from '@japa/runner'
import { PayPalDriver, paypalApiBase } from '../../src/payments/drivers/paypal.ts'
import { PAYPAL_TEST_CERTIFICATE_ORIGIN } from '../../src/payments/testing.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { PAYPAL_CERT } from './sdk_gateway_fixtures.ts'
import { paypalCertificateHost } from './sdk_gateway_stand_ins.ts'
import { gatewayStandIn } from './stand_ins.ts'

const WEBHOOK_ID = '8PT597110X687430LKGECATA'
const NOW = '2026-11-20T10:00:00.000Z'

function transmission(certUrl: string, body: string, overrides: Record<string, string> = {}) {
  const id = 'b2384410-f8d2-11e6-8e3b-af08e1f4ed46'
  const time = overrides['paypal-transmission-time'] ?? new Date().toISOString()
  const message = `${id}|${time}|${WEBHOOK_ID}|${crc32(body) >>> 0}`
  const sig = createSign('RSA-SHA256').update(message).sign(PAYPAL_CERT.privateKey, 'base64')
  const headers: Record<string, string> = {
    'paypal-transmission-id': id,
    'paypal-transmission-time': time,
    'paypal-transmission-sig': sig,
    'paypal-cert-url': certUrl,
    'paypal-auth-algo': 'SHA256withRSA',
    ...overrides,
  }
  return { rawBody: Buffer.from(body), headers, query: {} } as WebhookRequest
}

async function setup(options: Record<string, unknown> = {}) {
  const host = await paypalCertificateHost()
  const certUrl = host.serve('CERT-360caa42-independent', PAYPAL_CERT.certificate)
  const driver = new PayPalDriver({
    webhookId: WEBHOOK_ID,
    [PAYPAL_TEST_CERTIFICATE_ORIGIN]: host.origin,
    ...options,
  })
  const deliver = async (payload: unknown) => {
    const request = transmission(certUrl, JSON.stringify(payload))
    await driver.confirm(request)
    return driver.parse(request, 'paypal')
  }
  const toPayPal = (type: string, resource: unknown) =>
    deliver({ id: 'WH-01', create_time: '2026-11-20T10:00:00Z', event_type: type, resource })
  return { driver, certUrl, deliver, toPayPal }
}

const capture = {
  id: 'CAP01',
  amount: { currency_code: 'usd', value: '11.30' },
  custom_id: 'order-1',
  invoice_id: 'inv-1',
  create_time: '2026-11-20T09:00:00Z',
}

const dispute = (stage: string, outcome?: string) => ({
  dispute_id: 'PP-D-01',
  disputed_transactions: [null, { seller_transaction_id: 'CAP01', custom: 'order-1' }],
  reason: 'MERCHANDISE_OR_SERVICE_NOT_RECEIVED',
  dispute_amount: { currency_code: 'USD', value: '11.30' },
  dispute_life_cycle_stage: stage,
  seller_response_due_date: '2026-12-01T10:00:00Z',
  ...(outcome ? { dispute_outcome: { outcome_code: outcome } } : {}),
})

test.group('Payments PayPal: each event, whole', () => {
  test('a completed capture is payment.succeeded in minor units of its currency', async ({
    assert,
  }) => {
    const { deliver, toPayPal } = await setup()
    const payload = {
      id: 'WH-01',
      create_time: '2026-11-20T10:00:00Z',
      event_type: 'PAYMENT.CAPTURE.COMPLETED',
      resource: capture,
    }
    assert.deepEqual(await deliver(payload), {
      id: 'WH-01',
      provider: 'paypal',
      raw: payload,
      occurredAt: NOW,
      type: 'payment.succeeded',
      data: {
        paymentId: 'CAP01',
        amount: 1130,
        currency: 'USD',
        status: 'paid',
        paidAt: '2026-11-20T09:00:00.000Z',
        externalReference: 'order-1',
      },
    })
    const yen = await toPayPal('PAYMENT.CAPTURE.COMPLETED', {
      ...capture,
      custom_id: undefined,
      amount: { currency_code: 'JPY', value: '1130' },
    })
    assert.deepInclude(yen.data as any, { amount: 1130, externalReference: 'inv-1' })
  })

  test('a denied or declined capture is payment.failed with no paidAt', async ({ assert }) => {
    const { toPayPal } = await setup()
    for (const type of ['PAYMENT.CAPTURE.DENIED', 'PAYMENT.CAPTURE.DECLINED']) {
      const event = await toPayPal(type, { id: 'CAP02', amount: 'none' })
      assert.deepEqual(
        [event.type, event.data],
        [
          'payment.failed',
          { paymentId: 'CAP02', status: 'failed', paidAt: null, externalReference: null },
        ]
      )
    }
  })

  test('a refund names its capture by the up link and carries the running total', async ({
    assert,
  }) => {
    const { toPayPal } = await setup()
    const refund = {
      id: 'REF01',
      amount: { currency_code: 'EUR', value: '3.00' },
      seller_payable_breakdown: { total_refunded_amount: { currency_code: 'EUR', value: '8.00' } },
      custom_id: 'order-1',
      links: [
        'junk',
        null,
        { rel: 'self', href: 'https://api.paypal.com/v2/payments/refunds/REF01' },
        { rel: 'up', href: 'https://api.paypal.com/v2/payments/captures/CAP01?x=1' },
      ],
    }
    const event = await toPayPal('PAYMENT.CAPTURE.REFUNDED', refund)
    assert.deepEqual(
      [event.type, event.data],
      [
        'payment.updated',
        {
          paymentId: 'CAP01',
          currency: 'EUR',
          refunds: [{ id: 'REF01', amount: 300 }],
          refundedAmount: 800,
          externalReference: 'order-1',
        },
      ]
    )
    const bare = await toPayPal('PAYMENT.CAPTURE.REFUNDED', {
      id: 'REF02',
      links: [{ rel: 'up', href: '/v2/payments/captures/CAP02' }],
    })
    assert.deepEqual(bare.data, {
      paymentId: 'CAP02',
      currency: undefined,
      refunds: [{ id: 'REF02', amount: 0 }],
      externalReference: null,
    })
    for (const links of [
      undefined,
      [{ rel: 'self', href: 'https://api.paypal.com/v2/payments/captures/CAP03' }],
      [{ rel: 'up', href: 7 }],
      [{ rel: 'up', href: 'https://api.paypal.com/v2/payments/authorizations/A1' }],
    ]) {
      await assert.rejects(
        () => toPayPal('PAYMENT.CAPTURE.REFUNDED', { id: 'REF03', links }),
        'refund capture link is missing'
      )
    }
  })

  test('disputes: an inquiry warns, a chargeback disputes, an updated inquiry passes', async ({
    assert,
  }) => {
    const { toPayPal } = await setup()
    const data = {
      disputeId: 'PP-D-01',
      paymentId: 'CAP01',
      amount: 1130,
      currency: 'USD',
      reason: 'MERCHANDISE_OR_SERVICE_NOT_RECEIVED',
      actionableUntil: '2026-12-01T10:00:00.000Z',
      externalReference: 'order-1',
    }
    const cases: [string, string, string][] = [
      ['CUSTOMER.DISPUTE.CREATED', 'INQUIRY', 'payment.dispute_warning'],
      ['CUSTOMER.DISPUTE.CREATED', 'CHARGEBACK', 'payment.disputed'],
      ['CUSTOMER.DISPUTE.UPDATED', 'PRE_ARBITRATION', 'payment.disputed'],
      ['CUSTOMER.DISPUTE.UPDATED', 'INQUIRY', 'customer.dispute.updated'],
    ]
    for (const [type, stage, canonical] of cases) {
      const event = await toPayPal(type, dispute(stage))
      assert.deepEqual([event.type, event.data], [canonical, data], `${type} ${stage}`)
    }
    const outcomes: [string | undefined, string | undefined][] = [
      ['RESOLVED_SELLER_FAVOUR', 'won'],
      ['DENIED', 'won'],
      ['RESOLVED_BUYER_FAVOUR', 'lost'],
      ['RESOLVED_WITH_PAYOUT', 'lost'],
      ['ACCEPTED', 'lost'],
      ['CANCELED_BY_BUYER', 'canceled'],
      ['SOMETHING_NEW', undefined],
      [undefined, undefined],
    ]
    for (const [code, outcome] of outcomes) {
      const event = await toPayPal('CUSTOMER.DISPUTE.RESOLVED', dispute('INQUIRY', code))
      assert.deepEqual([event.type, event.data], ['payment.dispute_closed', { ...data, outcome }])
    }
    await assert.rejects(
      () => toPayPal('CUSTOMER.DISPUTE.CREATED', { dispute_id: 'D', disputed_transactions: {} }),
      'disputed seller_transaction_id is missing'
    )
    await assert.rejects(
      () => toPayPal('CUSTOMER.DISPUTE.CREATED', { disputed_transactions: [] }),
      'dispute_id is missing'
    )
  })

  test('subscription events map as documented, status lowercased', async ({ assert }) => {
    const { toPayPal } = await setup()
    const subscription = {
      id: 'I-01',
      plan_id: 'P-01',
      status: 'ACTIVE',
      custom_id: 'order-7',
      subscriber: { payer_id: 'PAYER01' },
      billing_info: { next_billing_time: '2026-12-20T10:00:00Z' },
    }
    const expected: [string, string][] = [
      ['BILLING.SUBSCRIPTION.CREATED', 'subscription.created'],
      ['BILLING.SUBSCRIPTION.ACTIVATED', 'subscription.updated'],
      ['BILLING.SUBSCRIPTION.UPDATED', 'subscription.updated'],
      ['BILLING.SUBSCRIPTION.SUSPENDED', 'subscription.updated'],
      ['BILLING.SUBSCRIPTION.RE-ACTIVATED', 'subscription.updated'],
      ['BILLING.SUBSCRIPTION.CANCELLED', 'subscription.canceled'],
      ['BILLING.SUBSCRIPTION.EXPIRED', 'subscription.canceled'],
    ]
    for (const [type, canonical] of expected) {
      const event = await toPayPal(type, subscription)
      assert.deepEqual(
        [event.type, event.data],
        [
          canonical,
          {
            subscriptionId: 'I-01',
            customerId: 'PAYER01',
            status: 'active',
            planId: 'P-01',
            currentPeriodEnd: '2026-12-20T10:00:00.000Z',
            canceledAt: null,
            externalReference: 'order-7',
          },
        ]
      )
    }
    const bare = await toPayPal('BILLING.SUBSCRIPTION.CREATED', { id: 'I-02' })
    assert.deepInclude(bare.data as any, { customerId: null, status: undefined })
    const other = await toPayPal('CHECKOUT.ORDER.APPROVED', { id: 'O-1' })
    assert.deepEqual([other.type, other.data], ['checkout.order.approved', { id: 'O-1' }])
  })
})

test.group('Payments PayPal: malformed transmissions are refused by name', () => {
  test('each missing header, a bad time, another algorithm or a wrong signature', async ({
    assert,
  }) => {
    const { driver, certUrl } = await setup()
    const body = JSON.stringify({ id: 'WH-02', event_type: 'X', resource: {} })
    for (const name of [
      'paypal-transmission-id',
      'paypal-transmission-time',
      'paypal-transmission-sig',
      'paypal-cert-url',
      'paypal-auth-algo',
    ]) {
      await assert.rejects(
        () => driver.confirm(transmission(certUrl, body, { [name]: '' })),
        `missing ${name} header`
      )
    }
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString()
    const cases: [Record<string, string>, string][] = [
      [{ 'paypal-transmission-time': 'yesterday' }, 'paypal-transmission-time is not a date'],
      [
        { 'paypal-transmission-time': minutesAgo(6) },
        'paypal-transmission-time is outside the tolerance',
      ],
      [
        { 'paypal-transmission-time': minutesAgo(-6) },
        'paypal-transmission-time is outside the tolerance',
      ],
      [{ 'paypal-auth-algo': 'SHA1withRSA' }, 'paypal-auth-algo is not SHA256withRSA'],
      [{ 'paypal-transmission-sig': 'AAAA' }, 'paypal-transmission-sig does not match the body'],
      [{ 'paypal-transmission-sig': '%%%' }, 'paypal-transmission-sig does not match the body'],
      [{ 'paypal-cert-url': 'not a url' }, 'paypal-cert-url is not a URL'],
    ]
    for (const [overrides, message] of cases) {
      await assert.rejects(() => driver.confirm(transmission(certUrl, body, overrides)), message)
    }
    // Four minutes is within the default 300 seconds, not within a tolerance of 60
    await driver.confirm(transmission(certUrl, body, { 'paypal-transmission-time': minutesAgo(4) }))
    const { driver: strict } = await setup({ tolerance: 60 })
    await assert.rejects(
      () =>
        strict.confirm(transmission(certUrl, body, { 'paypal-transmission-time': minutesAgo(2) })),
      'paypal-transmission-time is outside the tolerance'
    )
    // The message is over the raw bytes: the same JSON with one more space fails
    const request = transmission(certUrl, body)
    request.rawBody = Buffer.from(`${body} `)
    await assert.rejects(
      () => driver.confirm(request),
      'paypal-transmission-sig does not match the body'
    )
  })

  test('no webhook id, no JSON, no resource, no type or id', async ({ assert }) => {
    const { driver, certUrl } = await setup()
    await assert.rejects(
      () => new PayPalDriver({}).confirm(transmission(certUrl, '{}')),
      'paypal has no webhookId'
    )
    await assert.rejects(
      () => driver.confirm(transmission(certUrl, 'not json')),
      'body is not valid JSON'
    )
    assert.throws(
      () => driver.parse(transmission(certUrl, '{}'), 'paypal'),
      'PayPal delivery was not verified: call confirm(request) before parse'
    )
    const refusals: [unknown, string][] = [
      [{ id: 'WH', event_type: 'X' }, 'PayPal event has no resource'],
      [{ id: 'WH', event_type: 'X', resource: [] }, 'PayPal event has no resource'],
      [{ id: 'WH', resource: {} }, 'event_type is missing'],
      [{ event_type: 'X', resource: {} }, 'event id is missing'],
      [
        { id: 'WH', event_type: 'PAYMENT.CAPTURE.COMPLETED', resource: {} },
        'capture id is missing',
      ],
      [
        {
          id: 'WH',
          event_type: 'PAYMENT.CAPTURE.REFUNDED',
          resource: { links: [{ rel: 'up', href: '/v2/payments/captures/C1' }] },
        },
        'refund id is missing',
      ],
      [
        { id: 'WH', event_type: 'PAYMENT.CAPTURE.COMPLETED', resource: { id: 'C', amount: {} } },
        'currency_code is missing',
      ],
      [
        { id: 'WH', event_type: 'BILLING.SUBSCRIPTION.CREATED', resource: {} },
        'subscription id is missing',
      ],
    ]
    for (const [payload, message] of refusals) {
      const request = transmission(certUrl, JSON.stringify(payload))
      await driver.confirm(request)
      assert.throws(() => driver.parse(request, 'paypal'), message)
    }
  })

  test('verifyWithApi: the whole transmission goes to PayPal; errors are refusals', async ({
    assert,
  }) => {
    let answer: { status?: number; body: unknown } = { body: { verification_status: 'SUCCESS' } }
    const api = await gatewayStandIn(({ url }) =>
      url === '/v1/oauth2/token' ? { body: { access_token: 'A21' } } : answer
    )
    const driver = new PayPalDriver({
      webhookId: WEBHOOK_ID,
      clientId: 'id',
      clientSecret: 'secret',
      verifyWithApi: true,
      apiBaseUrl: `${api.url}//`,
    })
    const certUrl = 'https://api.paypal.com/v1/notifications/certs/CERT-api'
    const body = JSON.stringify({ id: 'WH-03', event_type: 'X', resource: {} })
    const request = transmission(certUrl, body)
    await driver.confirm(request)
    const [token, check] = api.requests
    assert.equal(token.body, 'grant_type=client_credentials')
    assert.equal(token.headers['content-type'], 'application/x-www-form-urlencoded')
    assert.equal(check.url, '/v1/notifications/verify-webhook-signature')
    assert.equal(check.headers.authorization, 'Bearer A21')
    assert.equal(check.headers['content-type'], 'application/json')
    assert.equal(check.headers.accept, 'application/json')
    assert.deepEqual(check.body, {
      auth_algo: 'SHA256withRSA',
      cert_url: certUrl,
      transmission_id: request.headers['paypal-transmission-id'],
      transmission_sig: request.headers['paypal-transmission-sig'],
      transmission_time: request.headers['paypal-transmission-time'],
      webhook_id: WEBHOOK_ID,
      webhook_event: JSON.parse(body),
    })
    answer = { status: 500, body: {} }
    await assert.rejects(
      () => driver.confirm(transmission(certUrl, body)),
      'PayPal verify-webhook-signature answered 500'
    )
    answer = { body: null }
    await assert.rejects(
      () => driver.confirm(transmission(certUrl, body)),
      'PayPal verify-webhook-signature did not confirm the delivery'
    )
    answer = { body: 'not an object' }
    await assert.rejects(
      () => driver.confirm(transmission(certUrl, body)),
      'PayPal verify-webhook-signature did not confirm the delivery'
    )
    const unreachable = new PayPalDriver({
      webhookId: WEBHOOK_ID,
      verifyWithApi: true,
      apiBaseUrl: 'http://127.0.0.1:9',
    })
    await assert.rejects(
      () => unreachable.confirm(transmission(certUrl, body)),
      'PayPal verify-webhook-signature could not be reached'
    )
  })

  test('the API base: apiBaseUrl without trailing slashes, else sandbox or live', ({ assert }) => {
    assert.equal(paypalApiBase({ apiBaseUrl: 'http://127.0.0.1:1/x//' }), 'http://127.0.0.1:1/x')
    assert.equal(paypalApiBase({ sandbox: true }), 'https://api-m.sandbox.paypal.com')
    assert.equal(paypalApiBase({}), 'https://api-m.paypal.com')
  })
})
