/**
 * Lemon Squeezy, database-free: deliveries signed with the documented formula
 * written out here (`X-Signature`, the hex HMAC-SHA256 of the raw body), never
 * with Atrium's own signer, and each event compared whole with docs/payments.md.
 */
import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { LemonSqueezyDriver } from '../../src/payments/drivers/lemonsqueezy.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'

const LEMON_SECRET = 'lemon-independent-signing-secret'

const request = (body: string, headers: Record<string, string>): WebhookRequest => ({
  rawBody: Buffer.from(body),
  headers,
  query: {},
})
const lemonSigned = (body: string, secret = LEMON_SECRET) =>
  request(body, { 'x-signature': createHmac('sha256', secret).update(body).digest('hex') })
const lemonDriver = new LemonSqueezyDriver({ signingSecret: LEMON_SECRET })

const lemon = (
  name: string,
  attributes: Record<string, unknown>,
  custom: unknown = { externalReference: 'order-1' }
) =>
  lemonDriver.parse(
    lemonSigned(
      JSON.stringify({
        meta: { event_name: name, custom_data: custom },
        data: { id: '42', attributes },
      })
    ),
    'lemonsqueezy'
  )
const order = {
  total: 1130,
  currency: 'usd',
  customer_id: 9,
  status: 'paid',
  created_at: '2026-11-20T09:00:00Z',
  updated_at: '2026-11-20T10:00:00Z',
}

test.group('Payments Lemon Squeezy: each event, whole', () => {
  test('a paid order is payment.succeeded; its id is the name, object and update', async ({
    assert,
  }) => {
    const body = JSON.stringify({
      meta: { event_name: 'order_created', custom_data: { externalReference: 'order-1' } },
      data: { id: 42, attributes: order },
    })
    assert.deepEqual(lemonDriver.parse(lemonSigned(body), 'ls'), {
      id: 'lemonsqueezy:order_created:42:2026-11-20T10:00:00Z',
      provider: 'ls',
      raw: JSON.parse(body),
      occurredAt: '2026-11-20T10:00:00.000Z',
      type: 'payment.succeeded',
      data: {
        paymentId: '42',
        amount: 1130,
        currency: 'USD',
        customerId: '9',
        externalReference: 'order-1',
        status: 'paid',
        paidAt: '2026-11-20T09:00:00.000Z',
      },
    })
    const created = lemon('order_created', { ...order, updated_at: undefined })
    assert.deepEqual(
      [created.id, created.occurredAt],
      ['lemonsqueezy:order_created:42:2026-11-20T09:00:00Z', '2026-11-20T09:00:00.000Z']
    )
    const dateless = lemon('order_created', { total: 1, status: 'paid' })
    assert.deepEqual([dateless.id, dateless.occurredAt], ['lemonsqueezy:order_created:42:-', null])
    assert.deepInclude(dateless.data as any, { currency: undefined, customerId: null })
  })

  test('invoice statuses: paid succeeds, failed fails, anything else is pending', async ({
    assert,
  }) => {
    const cases: [string, string, string, string][] = [
      ['subscription_payment_success', 'paid', 'payment.succeeded', 'paid'],
      ['subscription_payment_recovered', 'paid', 'payment.succeeded', 'paid'],
      ['subscription_payment_success', 'failed', 'payment.failed', 'failed'],
      ['subscription_payment_failed', 'pending', 'payment.failed', 'failed'],
      ['subscription_payment_failed', 'paid', 'payment.succeeded', 'paid'],
      ['order_created', 'pending', 'payment.updated', 'pending'],
      ['order_created', '', 'payment.updated', 'pending'],
    ]
    for (const [name, status, type, canonical] of cases) {
      const event = lemon(name, { ...order, status: status || undefined })
      assert.deepEqual(
        [event.type, (event.data as any).status],
        [type, canonical],
        `${name} ${status}`
      )
    }
  })

  test('refunds carry the cumulative amount; a whole refund is payment.refunded', async ({
    assert,
  }) => {
    const cases: [Record<string, unknown>, string, number][] = [
      [{ status: 'partial_refund', refunded_amount: 400 }, 'payment.updated', 400],
      [{ status: 'partial_refund', refunded_amount: 1129 }, 'payment.updated', 1129],
      [{ status: 'partial_refund', refunded_amount: 1130 }, 'payment.refunded', 1130],
      [{ status: 'refunded', refunded_amount: 300 }, 'payment.refunded', 300],
      [{ status: 'partial_refund', refunded_amount: undefined }, 'payment.refunded', 1130],
    ]
    for (const name of ['order_refunded', 'subscription_payment_refunded']) {
      for (const [extra, type, refunded] of cases) {
        const event = lemon(name, { ...order, ...extra })
        assert.deepEqual(
          [event.type, event.data],
          [
            type,
            {
              paymentId: '42',
              amount: 1130,
              currency: 'USD',
              customerId: '9',
              externalReference: 'order-1',
              refundedAmount: refunded,
              refunds: [{ id: '42:cumulative', amount: refunded }],
            },
          ]
        )
      }
    }
  })

  test('subscription events, the cancellation date, and passthroughs', async ({ assert }) => {
    const subscription = {
      status: 'active',
      customer_id: 9,
      variant_id: 5,
      renews_at: '2026-12-20T10:00:00Z',
      ends_at: '2026-12-31T10:00:00Z',
      cancelled: false,
      updated_at: '2026-11-21T10:00:00Z',
    }
    const expected: [string, string][] = [
      ['subscription_created', 'subscription.created'],
      ['subscription_updated', 'subscription.updated'],
      ['subscription_resumed', 'subscription.updated'],
      ['subscription_expired', 'subscription.updated'],
      ['subscription_paused', 'subscription.updated'],
      ['subscription_unpaused', 'subscription.updated'],
      ['subscription_cancelled', 'subscription.canceled'],
    ]
    for (const [name, type] of expected) {
      const event = lemon(name, subscription, { external_reference: 'order-2' })
      assert.deepEqual(
        [event.type, event.data],
        [
          type,
          {
            subscriptionId: '42',
            customerId: '9',
            status: 'active',
            planId: '5',
            currentPeriodEnd: '2026-12-20T10:00:00.000Z',
            canceledAt: type === 'subscription.canceled' ? '2026-11-21T10:00:00.000Z' : null,
            externalReference: 'order-2',
          },
        ]
      )
    }
    const cancelling = lemon(
      'subscription_updated',
      {
        ...subscription,
        renews_at: null,
        cancelled: true,
        status: null,
      },
      { order_id: 77 }
    )
    assert.deepInclude(cancelling.data as any, {
      canceledAt: '2026-11-21T10:00:00.000Z',
      currentPeriodEnd: '2026-12-31T10:00:00.000Z',
      status: undefined,
      externalReference: '77',
    })
    const noCustom = lemon('order_created', order, 'none')
    assert.isNull((noCustom.data as any).externalReference)
    const license = lemon('License_Key_Created', { key: 'abc', updated_at: 'x' })
    assert.deepEqual(
      [license.type, license.data],
      ['license_key_created', { key: 'abc', updated_at: 'x' }]
    )
  })

  test('a malformed delivery is refused by name', async ({ assert }) => {
    const good = JSON.stringify({
      meta: { event_name: 'order_created' },
      data: { id: '1', attributes: order },
    })
    assert.throws(
      () => new LemonSqueezyDriver({}).parse(lemonSigned(good), 'ls'),
      'lemonsqueezy has no signingSecret'
    )
    const cases: [WebhookRequest, string][] = [
      [request(good, {}), 'missing X-Signature header'],
      [lemonSigned(good, 'another-secret'), 'X-Signature does not match the body'],
      [lemonSigned('{"meta":'), 'body is not valid JSON'],
    ]
    const noParts = 'Lemon Squeezy delivery has no meta, data or data.attributes'
    for (const [body, message] of [
      [{ data: { id: '1', attributes: {} } }, noParts],
      [{ meta: {}, data: [] }, noParts],
      [{ meta: {}, data: { id: '1' } }, noParts],
      [{ meta: [], data: { id: '1', attributes: {} } }, noParts],
      [{ meta: {}, data: { id: '1', attributes: {} } }, 'meta.event_name is missing'],
      [{ meta: { event_name: 'order_created' }, data: { attributes: {} } }, 'data.id is missing'],
    ] as const) {
      cases.push([lemonSigned(JSON.stringify(body)), message])
    }
    for (const [delivery, message] of cases) {
      assert.throws(() => lemonDriver.parse(delivery, 'ls'), message)
    }
  })
})
