import { createHmac, createSign } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { test } from '@japa/runner'
import { Webhook } from 'standardwebhooks'
import { signedWebhook, type SignedWebhook } from '../../src/payments/testing.ts'
import { paymentsApp } from './helpers.ts'
import { makeCertificate } from './sdk_gateway_stand_ins.ts'
import {
  SDK_GATEWAYS,
  sdkGateways,
  PAYPAL_CERT,
  SECRETS,
  SUCCEEDED,
  type SdkGateway,
} from './sdk_gateway_fixtures.ts'

/** The header that carries each gateway's signature, for the mangled-header case */
const SIGNATURE_HEADER: Record<SdkGateway, string> = {
  paddle: 'paddle-signature',
  polar: 'webhook-signature',
  dodopayments: 'webhook-signature',
  paypal: 'paypal-transmission-sig',
  mollie: 'x-mollie-signature',
}

/** What each gateway's rejection names when the key is wrong */
const WRONG_KEY_MESSAGE: Record<SdkGateway, string> = {
  paddle: 'Paddle-Signature does not match the body',
  polar: 'Polar webhook-signature does not match the body',
  dodopayments: 'Dodo Payments webhook-signature does not match the body',
  paypal: 'paypal-transmission-sig does not match the body',
  mollie: 'X-Mollie-Signature does not match the body',
}

/**
 * A delivery signed independently of Atrium's signer and driver: the SDK's
 * own signer where it has one (standardwebhooks), else the formula the
 * gateway documents, written out here with node:crypto.
 */
function independentlySigned(
  gateway: SdkGateway,
  payload: unknown,
  certUrl: string
): SignedWebhook {
  const body = JSON.stringify(payload)
  const json = { 'content-type': 'application/json' }
  const now = Math.floor(Date.now() / 1000)
  switch (gateway) {
    case 'paddle': {
      const h1 = createHmac('sha256', SECRETS.paddle).update(`${now}:${body}`).digest('hex')
      return { body, headers: { ...json, 'Paddle-Signature': `ts=${now};h1=${h1}` } }
    }
    case 'polar':
    case 'dodopayments': {
      // Polar's SDK hands standardwebhooks the base64 of its secret string
      const secret =
        gateway === 'polar'
          ? Buffer.from(SECRETS.polar, 'utf8').toString('base64')
          : SECRETS.dodopayments
      const id = `msg_independent_${gateway}`
      const signature = new Webhook(secret).sign(id, new Date(now * 1000), body)
      return {
        body,
        headers: {
          ...json,
          'webhook-id': id,
          'webhook-timestamp': String(now),
          'webhook-signature': signature,
        },
      }
    }
    case 'paypal': {
      const id = '8f4e5a60-atrium-independent'
      const time = new Date().toISOString()
      const message = `${id}|${time}|${SECRETS.paypalWebhookId}|${crc32(body)}`
      const signature = createSign('RSA-SHA256')
        .update(message)
        .sign(PAYPAL_CERT.privateKey, 'base64')
      return {
        body,
        headers: {
          ...json,
          'PAYPAL-TRANSMISSION-ID': id,
          'PAYPAL-TRANSMISSION-TIME': time,
          'PAYPAL-TRANSMISSION-SIG': signature,
          'PAYPAL-CERT-URL': certUrl,
          'PAYPAL-AUTH-ALGO': 'SHA256withRSA',
        },
      }
    }
    case 'mollie': {
      const hex = createHmac('sha256', SECRETS.mollie).update(body).digest('hex')
      return { body, headers: { ...json, 'X-Mollie-Signature': `sha256=${hex}` } }
    }
  }
}

async function setup(handlers: Record<string, () => void> = {}) {
  const b = await sdkGateways()
  const app = await paymentsApp({ config: { providers: b.providers, billing: { handlers } } })
  const sign = (gateway: SdkGateway, payload: unknown, extra: Record<string, unknown> = {}) =>
    signedWebhook(gateway, payload, { ...b.credentials[gateway], ...extra })
  return { ...b, app, sign }
}

async function rejection(response: Response) {
  const body = (await response.json()) as any
  return {
    status: response.status,
    code: body.errors?.[0]?.code,
    message: body.errors?.[0]?.message,
  }
}

test.group('Payments gateways: Paddle, Polar, Dodo Payments, PayPal, Mollie', () => {
  for (const gateway of SDK_GATEWAYS) {
    test(`${gateway}: a signed delivery is verified against the raw bytes, recorded and synced`, async ({
      assert,
    }) => {
      const { app, sign } = await setup()
      const { payload, paymentId } = SUCCEEDED[gateway]('a1')
      const signed = sign(gateway, JSON.stringify(payload, null, 2))
      assert.include(signed.body, 'São João')
      const response = await app.post(gateway, signed)
      assert.equal(response.status, 200, await response.clone().text())
      const [event] = await app.rows('events')
      assert.equal(event.status, 'processed')
      assert.equal(event.provider, gateway)
      const [payment] = await app.rows('payments')
      assert.equal(payment.payment_id, paymentId)
      assert.equal(payment.status, 'paid')
      assert.strictEqual(Number(payment.amount), 1130)
      assert.equal(payment.external_reference, 'order-a1')
    })

    test(`${gateway}: a delivery signed independently of Atrium verifies`, async ({ assert }) => {
      const { app, certUrl } = await setup()
      const signed = independentlySigned(gateway, SUCCEEDED[gateway]('i1').payload, certUrl)
      const response = await app.post(gateway, signed)
      assert.equal(response.status, 200, await response.clone().text())
      assert.lengthOf(await app.rows('payments'), 1)
    })

    test(`${gateway}: a redelivery of the same event runs once`, async ({ assert }) => {
      let runs = 0
      const { app, sign } = await setup({ 'payment.succeeded': () => void runs++ })
      const signed = sign(gateway, SUCCEEDED[gateway]('r1').payload)
      const first = await app.post(gateway, signed)
      const second = await app.post(gateway, signed)
      assert.deepEqual([first.status, second.status], [200, 200])
      assert.equal(runs, 1)
      assert.lengthOf(await app.rows('events'), 1)
      assert.lengthOf(await app.rows('payments'), 1)
    })

    test(`${gateway}: a delivery signed with the wrong key is rejected, naming the signature`, async ({
      assert,
    }) => {
      const { app, sign } = await setup()
      const wrong =
        gateway === 'paypal'
          ? { privateKey: makeCertificate().privateKey }
          : { webhookSecret: gateway === 'dodopayments' ? 'whsec_b3RoZXIta2V5' : 'other-secret' }
      const response = await app.post(
        gateway,
        sign(gateway, SUCCEEDED[gateway]('w1').payload, wrong)
      )
      assert.deepEqual(await rejection(response), {
        status: 400,
        code: 'E_WEBHOOK_REJECTED',
        message: WRONG_KEY_MESSAGE[gateway],
      })
      assert.lengthOf(await app.rows('events'), 0)
      assert.lengthOf(await app.rows('payments'), 0)
      const [audit] = await app.rows('audit')
      assert.equal(audit.type, 'webhook.rejected')
    })

    test(`${gateway}: a truncated body is rejected`, async ({ assert }) => {
      const { app, sign } = await setup()
      const signed = sign(gateway, SUCCEEDED[gateway]('t1').payload)
      const response = await app.post(gateway, { ...signed, body: signed.body.slice(0, -7) })
      const { status, message } = await rejection(response)
      assert.equal(status, 400)
      assert.match(message, /does not match|not valid JSON/)
      assert.lengthOf(await app.rows('events'), 0)
    })

    test(`${gateway}: a mangled or missing signature header is rejected`, async ({ assert }) => {
      const { app, sign } = await setup()
      const signed = sign(gateway, SUCCEEDED[gateway]('m1').payload)
      const name = SIGNATURE_HEADER[gateway]
      const mangled = { ...signed.headers, [name]: `${signed.headers[name].slice(0, -6)}AAAAAA` }
      const first = await rejection(await app.post(gateway, { ...signed, headers: mangled }))
      assert.equal(first.status, 400)
      const without = Object.fromEntries(
        Object.entries(signed.headers).filter(([header]) => header !== name)
      )
      const second = await rejection(await app.post(gateway, { ...signed, headers: without }))
      assert.equal(second.status, 400)
      assert.match(second.message, gateway === 'mollie' ? /X-Mollie-Signature/ : /missing/i)
      assert.lengthOf(await app.rows('events'), 0)
    })
  }

  for (const [gateway, age, message] of [
    ['paddle', 60, 'Paddle-Signature timestamp is outside the SDK tolerance (5 seconds)'],
    ['polar', 600, 'Polar webhook-timestamp is older than the 5-minute tolerance'],
    ['dodopayments', 600, 'Dodo Payments webhook-timestamp is older than the 5-minute tolerance'],
    ['paypal', 600, 'paypal-transmission-time is outside the tolerance'],
  ] as const) {
    test(`${gateway}: a stale timestamp is rejected though the signature is right`, async ({
      assert,
    }) => {
      const { app, sign } = await setup()
      const timestamp = Math.floor(Date.now() / 1000) - age
      const signed = sign(gateway, SUCCEEDED[gateway]('s1').payload, { timestamp })
      assert.deepEqual(await rejection(await app.post(gateway, signed)), {
        status: 400,
        code: 'E_WEBHOOK_REJECTED',
        message,
      })
      assert.lengthOf(await app.rows('events'), 0)
    })
  }

  test('mollie: a classic id-only webhook records the payment Mollie answers, not the body', async ({
    assert,
  }) => {
    const { app, mollie } = await setup()
    const { mollie: samples } = await import('./sdk_gateway_fixtures.ts')
    mollie.set(samples.payment('c1'))
    const signed = signedWebhook('mollie', { id: 'tr_c1' })
    assert.equal(signed.body, 'id=tr_c1')
    const response = await app.post('mollie', signed)
    assert.equal(response.status, 200, await response.clone().text())
    const [payment] = await app.rows('payments')
    assert.equal(payment.payment_id, 'tr_c1')
    assert.strictEqual(Number(payment.amount), 1130)
    assert.equal(payment.external_reference, 'order-c1')
    assert.equal(mollie.requests[0].url, '/v2/payments/tr_c1')
    // Mollie calls again for the same, unchanged payment: the same event
    const again = await app.post('mollie', signed)
    assert.equal(again.status, 200)
    assert.lengthOf(await app.rows('events'), 1)
  })

  test('mollie: an id Mollie does not know, or that is no payment id, is rejected', async ({
    assert,
  }) => {
    const { app, mollie } = await setup()
    const unknown = await rejection(await app.post('mollie', signedWebhook('mollie', 'tr_forged')))
    assert.deepEqual(unknown, {
      status: 400,
      code: 'E_WEBHOOK_REJECTED',
      message: 'Mollie does not confirm this payment',
    })
    const other = await rejection(await app.post('mollie', signedWebhook('mollie', '../v2/x')))
    assert.equal(other.message, 'Mollie id is not a payment id (tr_...)')
    assert.lengthOf(mollie.requests, 1)
    assert.lengthOf(await app.rows('events'), 0)
  })
})
