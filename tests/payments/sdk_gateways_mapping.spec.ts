import { test } from '@japa/runner'
import { Webhook } from 'standardwebhooks'
import { verifyStandardWebhook } from '../../src/payments/drivers/standard_webhooks.ts'
import { signedWebhook } from '../../src/payments/testing.ts'
import { standardWebhookHeaders, whsecKey } from '../../src/payments/testing/standard_webhooks.ts'
import type { PaymentDriver, WebhookEvent } from '../../src/payments/types.ts'
import {
  dodo,
  sdkGateways,
  mollie,
  paddle,
  paypal,
  polar,
  webhookRequest,
  type SdkGateway,
} from './sdk_gateway_fixtures.ts'

type Case = [type: string, payload: unknown, check?: (event: WebhookEvent<any>) => void]

/** Each gateway's events, one per canonical type it has, and a passthrough */
const CASES: Record<Exclude<SdkGateway, 'mollie'>, Case[]> = {
  paddle: [
    ['payment.succeeded', paddle.transaction('p1')],
    ['payment.failed', paddle.transaction('p2', 'transaction.payment_failed')],
    [
      'payment.refunded',
      paddle.adjustment('p3', 'refund', { type: 'full', totals: { total: '1130' } }),
    ],
    ['payment.updated', paddle.adjustment('p4', 'refund')],
    ['payment.dispute_warning', paddle.adjustment('p5', 'chargeback_warning')],
    ['payment.disputed', paddle.adjustment('p6', 'chargeback')],
    [
      'payment.dispute_closed',
      paddle.adjustment('p7', 'chargeback_reverse'),
      (e) => e.data.outcome === 'won',
    ],
    ['subscription.created', paddle.subscription('p8', 'subscription.created')],
    ['subscription.updated', paddle.subscription('p9', 'subscription.paused')],
    ['subscription.canceled', paddle.subscription('p10', 'subscription.canceled')],
    ['customer.created', paddle.event('p11', 'customer.created', { id: 'ctm_1' })],
  ],
  polar: [
    ['payment.succeeded', polar.order('o1')],
    [
      'payment.refunded',
      polar.order('o2', 'order.refunded', { status: 'refunded', refunded_amount: 1130 }),
    ],
    ['payment.updated', polar.refund('o3')],
    ['subscription.created', polar.subscription('o4', 'subscription.created')],
    ['subscription.updated', polar.subscription('o5', 'subscription.canceled')],
    ['subscription.canceled', polar.subscription('o6', 'subscription.revoked')],
    ['checkout.created', polar.event('checkout.created', { id: 'chk_1' })],
  ],
  dodopayments: [
    ['payment.succeeded', dodo.payment('d1')],
    ['payment.failed', dodo.payment('d2', 'payment.failed')],
    ['payment.updated', dodo.refund('d3'), (e) => e.data.refunds[0].amount === 300],
    ['payment.dispute_warning', dodo.dispute('d4', 'dispute.opened', 'pre_dispute')],
    ['payment.disputed', dodo.dispute('d5', 'dispute.opened')],
    [
      'payment.dispute_closed',
      dodo.dispute('d6', 'dispute.lost'),
      (e) => e.data.outcome === 'lost',
    ],
    ['subscription.created', dodo.subscription('d7', 'subscription.active')],
    ['subscription.updated', dodo.subscription('d8', 'subscription.on_hold')],
    ['subscription.canceled', dodo.subscription('d9', 'subscription.cancelled')],
    ['license_key.created', dodo.event('license_key.created', { id: 'lic_1' })],
  ],
  paypal: [
    ['payment.succeeded', paypal.capture('y1')],
    ['payment.failed', paypal.capture('y2', 'PAYMENT.CAPTURE.DECLINED')],
    [
      'payment.updated',
      paypal.refund('y3'),
      (e) => e.data.paymentId === 'CAPy3' && e.data.refundedAmount === 300,
    ],
    ['payment.dispute_warning', paypal.dispute('y4', 'CUSTOMER.DISPUTE.CREATED', 'INQUIRY')],
    ['payment.disputed', paypal.dispute('y5', 'CUSTOMER.DISPUTE.CREATED')],
    [
      'payment.dispute_closed',
      paypal.dispute('y6', 'CUSTOMER.DISPUTE.RESOLVED', 'CHARGEBACK', 'RESOLVED_SELLER_FAVOUR'),
      (e) => e.data.outcome === 'won',
    ],
    ['subscription.created', paypal.subscription('y7', 'BILLING.SUBSCRIPTION.CREATED')],
    ['subscription.updated', paypal.subscription('y8', 'BILLING.SUBSCRIPTION.SUSPENDED')],
    ['subscription.canceled', paypal.subscription('y9', 'BILLING.SUBSCRIPTION.CANCELLED')],
    ['checkout.order.approved', paypal.event('y10', 'CHECKOUT.ORDER.APPROVED', { id: 'O-1' })],
  ],
}

async function drivers() {
  const b = await sdkGateways()
  const loaded = {} as Record<SdkGateway, PaymentDriver>
  for (const name of Object.keys(b.providers) as SdkGateway[]) {
    loaded[name] = await b.providers[name].resolver()
  }
  const deliver = async (
    gateway: SdkGateway,
    payload: unknown,
    credentials = b.credentials[gateway]
  ) => {
    const request = webhookRequest(signedWebhook(gateway, payload, credentials))
    await loaded[gateway].confirm?.(request)
    return loaded[gateway].parse(request, gateway) as WebhookEvent<any>
  }
  return { ...b, drivers: loaded, deliver }
}

test.group('Payments mapping: Paddle, Polar, Dodo Payments, PayPal, Mollie', () => {
  for (const [gateway, cases] of Object.entries(CASES) as [SdkGateway, Case[]][]) {
    test(`${gateway}: each event maps to its canonical type, amounts in minor units`, async ({
      assert,
    }) => {
      const { deliver } = await drivers()
      for (const [type, payload, check] of cases) {
        const event = await deliver(gateway, payload)
        assert.equal(event.type, type, `${gateway} ${JSON.stringify(payload).slice(0, 80)}`)
        assert.equal(event.provider, gateway)
        assert.isString(event.id)
        if (check) assert.isTrue(check(event), `${type}: ${JSON.stringify(event.data)}`)
        if (type === 'payment.succeeded') {
          assert.strictEqual(event.data.amount, 1130)
          assert.match(event.data.externalReference, /^order-/)
        }
      }
    })
  }

  test('mollie: payment states Mollie answers map to their canonical types and stable ids', async ({
    assert,
  }) => {
    const { deliver, mollie: api } = await drivers()
    const states: [string, Record<string, unknown>, string][] = [
      ['m1', mollie.payment('m1'), 'payment.succeeded'],
      ['m2', mollie.payment('m2', 'failed'), 'payment.failed'],
      ['m3', mollie.payment('m3', 'expired'), 'payment.failed'],
      ['m4', mollie.payment('m4', 'open'), 'payment.updated'],
      [
        'm5',
        mollie.payment('m5', 'paid', { amountRefunded: { value: '11.30', currency: 'EUR' } }),
        'payment.refunded',
      ],
      [
        'm6',
        mollie.payment('m6', 'paid', { amountRefunded: { value: '3.00', currency: 'EUR' } }),
        'payment.updated',
      ],
      [
        'm7',
        mollie.payment('m7', 'paid', { amountChargedBack: { value: '11.30', currency: 'EUR' } }),
        'payment.disputed',
      ],
    ]
    for (const [key, payment, type] of states) {
      api.set(payment as any)
      const event = await deliver('mollie', `tr_${key}`, {})
      assert.equal(event.type, type, key)
      assert.equal(event.data.paymentId, `tr_${key}`)
    }
    const partial = await deliver('mollie', 'tr_m6', {})
    assert.equal(partial.id, 'mollie:tr_m6:paid:300:0')
    assert.equal(partial.data.refundedAmount, 300)
    const linkPaid = await deliver('mollie', mollie.linkPaid('m8'))
    assert.equal(linkPaid.type, 'payment.succeeded')
    assert.equal(linkPaid.id, 'event_m8')
  })

  test('a driver refuses to map a delivery its confirm step did not verify', async ({ assert }) => {
    const { drivers: loaded, credentials } = await drivers()
    for (const gateway of ['paddle', 'paypal', 'mollie'] as const) {
      const request = webhookRequest(
        signedWebhook(
          gateway,
          gateway === 'paypal' ? paypal.capture('n1') : paddle.transaction('n1'),
          credentials[gateway]
        )
      )
      assert.throws(() => loaded[gateway].parse(request, gateway), /was not verified/)
    }
  })

  test('Standard Webhooks: the published test vector signs and verifies byte for byte', async ({
    assert,
  }) => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
    const body = '{"test": 2432232314}'
    const headers = standardWebhookHeaders(body, whsecKey(secret), {
      messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestamp: 1614265330,
    })
    assert.equal(headers['webhook-signature'], 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
    const realNow = Date.now
    Date.now = () => 1614265330 * 1000 + 10_000
    try {
      const verified = verifyStandardWebhook(
        new Webhook(secret),
        webhookRequest({ body, headers }),
        'Dodo Payments'
      )
      assert.deepEqual(verified, {
        messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
        body: { test: 2432232314 },
      })
    } finally {
      Date.now = realNow
    }
    // Today the same vector is 5 years stale
    assert.throws(
      () =>
        verifyStandardWebhook(
          new Webhook(secret),
          webhookRequest({ body, headers }),
          'Dodo Payments'
        ),
      'Dodo Payments webhook-timestamp is older than the 5-minute tolerance'
    )
  })

  test('Standard Webhooks: any one of several space-separated signatures may match', async ({
    assert,
  }) => {
    const { drivers: loaded, credentials } = await drivers()
    const signed = signedWebhook('dodopayments', dodo.payment('ms1'), credentials.dodopayments)
    signed.headers['webhook-signature'] =
      `v1,AAAA${'A'.repeat(40)}= v2,other ${signed.headers['webhook-signature']}`
    const event = loaded.dodopayments.parse(webhookRequest(signed), 'dodopayments') as WebhookEvent
    assert.equal(event.type, 'payment.succeeded')
  })
})

test.group('Payments benchmark fixtures', () => {
  test('every gateway of the benchmarks signs a payment.succeeded its driver accepts, and its wrong credentials are refused', async ({
    assert,
    cleanup,
  }) => {
    const { GATEWAY_FIXTURES, gatewayApiStandIn } =
      await import('../../benchmarks/lib/gateway_fixtures.ts')
    const api = await gatewayApiStandIn({ paid: true })
    cleanup(() => api.close())
    const request = (signed: ReturnType<typeof signedWebhook>) => ({
      ...webhookRequest(signed),
      query: signed.query ?? {},
    })
    assert.lengthOf(GATEWAY_FIXTURES, 18)
    for (const fixture of GATEWAY_FIXTURES) {
      const driver: PaymentDriver = await fixture.provider(api.url).resolver()
      const genuine = request(
        signedWebhook(fixture.name, fixture.payload('bench1'), fixture.credentials(api.url))
      )
      await driver.confirm?.(genuine)
      const [event] = [driver.parse(genuine, fixture.name)].flat() as WebhookEvent<any>[]
      assert.equal(event.type, 'payment.succeeded', fixture.name)

      // InfinitePay signs nothing (its API confirms the payment): no wrong key to sign with
      if (Object.keys(fixture.credentials(api.url)).length === 0) continue
      const forged = request(
        signedWebhook(fixture.name, fixture.payload('bench2'), fixture.wrongCredentials(api.url))
      )
      let refused = false
      try {
        await driver.confirm?.(forged)
        driver.parse(forged, fixture.name)
      } catch {
        refused = true
      }
      assert.isTrue(
        refused,
        `${fixture.name} accepted a delivery signed with the wrong credentials`
      )
    }
  }).timeout(60_000)
})
