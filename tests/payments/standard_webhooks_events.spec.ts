/**
 * Polar and Dodo Payments, database-free: the Standard Webhooks checks
 * (headers, signatures, the 5-minute tolerance, the body) refuse each
 * malformed delivery by name.
 */
import { test } from '@japa/runner'
import { DodoPaymentsDriver } from '../../src/payments/drivers/dodopayments.ts'
import { PolarDriver } from '../../src/payments/drivers/polar.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { dodo, KEYS, NOW, polar, signed } from './standard_webhooks_signing.ts'

test.group('Payments Standard Webhooks: malformed deliveries are refused by name', () => {
  test('a missing header, a wrong signature, a stale or future timestamp', async ({ assert }) => {
    const body = JSON.stringify({
      type: 'order.paid',
      timestamp: NOW,
      data: { id: 'o', total_amount: 1 },
    })
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const request = signed(KEYS.polar, body)
      delete request.headers[name]
      assert.throws(() => polar.parse(request, 'polar'), `missing ${name} header`)
    }
    const now = Math.floor(Date.now() / 1000)
    const cases: [WebhookRequest, string][] = [
      [signed(KEYS.dodo, body), 'Polar webhook-signature does not match the body'],
      [
        signed(KEYS.polar, body, { timestamp: String(now - 400) }),
        'Polar webhook-timestamp is older than the 5-minute tolerance',
      ],
      [
        signed(KEYS.polar, body, { timestamp: String(now + 400) }),
        'Polar webhook-timestamp is more than 5 minutes in the future',
      ],
      [signed(KEYS.polar, body, { timestamp: 'soon' }), 'Polar webhook-timestamp is not a number'],
      [signed(KEYS.polar, '{"type":'), 'Polar body is not valid JSON'],
      [signed(KEYS.polar, '[1,2]'), 'body is not a JSON object'],
      [signed(KEYS.polar, '{"timestamp":1,"data":{}}'), 'event type is missing'],
      [signed(KEYS.polar, '{"type":"order.paid","data":[]}'), 'Polar event has no data'],
      [signed(KEYS.polar, '{"type":"order.paid","data":{}}'), 'order id is missing'],
    ]
    for (const [request, message] of cases) {
      assert.throws(() => polar.parse(request, 'polar'), message)
    }
    // Within the tolerance either way is accepted
    for (const offset of [-290, 290]) {
      const request = signed(KEYS.polar, body, { timestamp: String(now + offset) })
      assert.equal(polar.parse(request, 'polar').type, 'payment.succeeded')
    }
  })

  test('several space-separated signatures: any v1 one may match', async ({ assert }) => {
    const body = JSON.stringify({
      type: 'payment.succeeded',
      data: { payment_id: 'p', total_amount: 1 },
    })
    const genuine = signed(KEYS.dodo, body).headers['webhook-signature'] as string
    const request = signed(KEYS.dodo, body, { signature: `v1,bm90LWl0 v2,x ${genuine}` })
    assert.equal(dodo.parse(request, 'dodo').type, 'payment.succeeded')
    const wrongVersion = signed(KEYS.dodo, body, { signature: genuine.replace('v1,', 'v2,') })
    assert.throws(
      () => dodo.parse(wrongVersion, 'dodo'),
      'Dodo Payments webhook-signature does not match the body'
    )
  })

  test('a driver without a secret, or with a key that is not whsec_, is refused', async ({
    assert,
  }) => {
    const request = signed(KEYS.polar, '{}')
    assert.throws(() => new PolarDriver({}).parse(request, 'polar'), 'polar has no webhookSecret')
    assert.throws(
      () => new DodoPaymentsDriver({}).parse(request, 'dodo'),
      'dodopayments has no webhookSecret'
    )
    assert.throws(
      () => new DodoPaymentsDriver({ webhookSecret: 'whsec_***not base64***' }),
      'Invalid "webhookSecret" for dodopayments in config/payments.ts: expected the whsec_ key from the Dodo Payments dashboard (DODO_PAYMENTS_WEBHOOK_KEY)'
    )
  })
})
