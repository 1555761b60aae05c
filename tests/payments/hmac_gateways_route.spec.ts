import { createHmac, randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import Razorpay from 'razorpay'
import { WebhooksHelper } from 'square'
import { signedWebhook, type SignedWebhook } from '../../src/payments/testing.ts'
import { CREDENTIALS, paymentsApp, statusOf } from './helpers.ts'
import {
  HMAC_GATEWAY_FIXTURES,
  WRONG_CREDENTIALS_A,
  mercadoPagoPayment,
} from './hmac_gateway_fixtures.ts'

type App = Awaited<ReturnType<typeof paymentsApp>>
type Provider = 'lemonsqueezy' | 'mercadopago' | 'pagarme' | 'razorpay' | 'square'

const SIGNATURE_HEADER: Record<Provider, string> = {
  lemonsqueezy: 'x-signature',
  mercadopago: 'x-signature',
  pagarme: 'x-hub-signature',
  razorpay: 'x-razorpay-signature',
  square: 'x-square-hmacsha256-signature',
}

const json = { 'content-type': 'application/json' }

/**
 * Each gateway's documented formula computed here with node:crypto, apart
 * from the driver and from `signedWebhook`.
 */
function independentlySigned(provider: Provider, payload: unknown): SignedWebhook {
  const body = JSON.stringify(payload)
  const hmac = (algorithm: string, key: string, data: string) =>
    createHmac(algorithm, key).update(data)
  switch (provider) {
    case 'lemonsqueezy': {
      const signature = hmac('sha256', CREDENTIALS.lemonsqueezy.webhookSecret, body).digest('hex')
      return { body, headers: { ...json, 'x-signature': signature } }
    }
    case 'mercadopago': {
      const dataId = (payload as any).data.id
      const requestId = randomUUID()
      const ts = Math.floor(Date.now() / 1000)
      const manifest = `id:${dataId};request-id:${requestId};ts:${ts};`
      const v1 = hmac('sha256', CREDENTIALS.mercadopago.webhookSecret, manifest).digest('hex')
      return {
        body,
        headers: { ...json, 'x-signature': `ts=${ts},v1=${v1}`, 'x-request-id': requestId },
        query: { 'data.id': dataId, 'type': 'payment' },
      }
    }
    case 'pagarme': {
      const signature = hmac('sha1', CREDENTIALS.pagarme.secretKey, body).digest('hex')
      return { body, headers: { ...json, 'x-hub-signature': `sha1=${signature}` } }
    }
    case 'razorpay': {
      const signature = hmac('sha256', CREDENTIALS.razorpay.webhookSecret, body).digest('hex')
      return { body, headers: { ...json, 'x-razorpay-signature': signature } }
    }
    case 'square': {
      const { signatureKey, notificationUrl } = CREDENTIALS.square
      const signature = hmac('sha256', signatureKey, notificationUrl + body).digest('base64')
      return { body, headers: { ...json, 'x-square-hmacsha256-signature': signature } }
    }
  }
  throw new Error(`no formula for ${provider}`)
}

function sign(provider: Provider, payload: unknown, credentials?: Record<string, unknown>) {
  return signedWebhook(provider, payload, (credentials ?? CREDENTIALS[provider]) as any)
}

/** What the gateway's API must answer for the delivery to be confirmed (Mercado Pago) */
function prepare(app: App, provider: Provider, id: string) {
  if (provider === 'mercadopago') {
    app.mercadopago.set(`/v1/payments/${id}`, mercadoPagoPayment(id))
  }
}

async function rejection(response: Response) {
  const body = (await response.json()) as any
  return {
    status: response.status,
    code: body.errors?.[0]?.code,
    message: body.errors?.[0]?.message,
  }
}

test.group('Payments gateways: Lemon Squeezy, Mercado Pago, Pagar.me, Razorpay, Square', () => {
  for (const provider of Object.keys(HMAC_GATEWAY_FIXTURES) as Provider[]) {
    const fixture = HMAC_GATEWAY_FIXTURES[provider]

    test(`${provider}: a delivery signed independently with the documented formula is recorded and synced`, async ({
      assert,
    }) => {
      const app = await paymentsApp()
      prepare(app, provider, 'a1')
      const response = await app.post(
        provider,
        independentlySigned(provider, fixture.payload('a1'))
      )
      assert.equal(response.status, 200, await response.clone().text())
      const [event] = await app.rows('events')
      assert.equal(event.status, 'processed')
      assert.equal(event.provider, provider)
      const [payment] = await app.rows('payments')
      assert.equal(payment.payment_id, fixture.paymentId('a1'))
      assert.equal(payment.status, 'paid')
      assert.strictEqual(Number(payment.amount), fixture.amount)
      assert.equal(payment.external_reference, fixture.externalReference('a1'))
    })

    test(`${provider}: a redelivery of the same event is recorded once`, async ({ assert }) => {
      const app = await paymentsApp()
      prepare(app, provider, 'r1')
      const signed = sign(provider, JSON.stringify(fixture.payload('r1'), null, 2))
      assert.equal(await statusOf(app.post(provider, signed)), 200)
      assert.equal(await statusOf(app.post(provider, signed)), 200)
      // A second notification of the same state (another request id, a new signature)
      assert.equal(await statusOf(app.post(provider, sign(provider, fixture.payload('r1')))), 200)
      assert.lengthOf(await app.rows('events'), 1)
      assert.lengthOf(await app.rows('payments'), 1)
    })

    test(`${provider}: a delivery signed with the wrong key is rejected with 400 and never recorded`, async ({
      assert,
    }) => {
      const app = await paymentsApp()
      prepare(app, provider, 'w1')
      const response = await app.post(
        provider,
        sign(provider, fixture.payload('w1'), WRONG_CREDENTIALS_A[provider])
      )
      const { status, code, message } = await rejection(response)
      assert.equal(status, 400)
      assert.equal(code, 'E_WEBHOOK_REJECTED')
      assert.match(message, /does not match/)
      assert.lengthOf(await app.rows('events'), 0)
      assert.lengthOf(await app.rows('payments'), 0)
      const [audit] = await app.rows('audit')
      assert.equal(audit.type, 'webhook.rejected')
      assert.equal(audit.provider, provider)
    })

    test(`${provider}: a truncated body is rejected with 400 and never recorded`, async ({
      assert,
    }) => {
      const app = await paymentsApp()
      prepare(app, provider, 't1')
      const signed = sign(provider, fixture.payload('t1'))
      const response = await app.post(provider, { ...signed, body: signed.body.slice(0, -7) })
      const { status, message } = await rejection(response)
      assert.equal(status, 400)
      // Mercado Pago signs the notified id, not the body: the body fails as JSON instead
      assert.match(message, provider === 'mercadopago' ? /not valid JSON/ : /does not match/)
      assert.lengthOf(await app.rows('events'), 0)
    })

    test(`${provider}: a mangled or missing signature header is rejected with 400`, async ({
      assert,
    }) => {
      const app = await paymentsApp()
      prepare(app, provider, 'm1')
      const signed = sign(provider, fixture.payload('m1'))
      const name = SIGNATURE_HEADER[provider]
      const value = signed.headers[name]
      const flipped = value.slice(0, 12) + (value[12] === 'a' ? 'b' : 'a') + value.slice(13)
      for (const headers of [
        { ...signed.headers, [name]: flipped },
        { ...signed.headers, [name]: value.slice(0, value.length - 4) },
        Object.fromEntries(Object.entries(signed.headers).filter(([key]) => key !== name)),
      ]) {
        const { status, message } = await rejection(
          await app.post(provider, { ...signed, headers })
        )
        assert.equal(status, 400)
        assert.match(message, new RegExp(name, 'i'))
      }
      assert.lengthOf(await app.rows('events'), 0)
    })
  }

  test('mercadopago: a stale timestamp is rejected; so are a changed x-request-id or data.id', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    prepare(app, 'mercadopago', 's1')
    prepare(app, 'mercadopago', 's2')
    const payload = HMAC_GATEWAY_FIXTURES.mercadopago.payload('s1')
    const stale = sign('mercadopago', payload, {
      ...CREDENTIALS.mercadopago,
      timestamp: Math.floor(Date.now() / 1000) - 301,
    })
    const old = await rejection(await app.post('mercadopago', stale))
    assert.equal(old.status, 400)
    assert.match(old.message, /tolerance/)
    // Mercado Pago has also sent ts in milliseconds
    const inMs = sign('mercadopago', payload, {
      ...CREDENTIALS.mercadopago,
      timestamp: Date.now() - 400_000,
    })
    const oldInMs = await rejection(await app.post('mercadopago', inMs))
    assert.match(oldInMs.message, /tolerance/)

    const signed = sign('mercadopago', payload)
    const otherRequest = { ...signed, headers: { ...signed.headers, 'x-request-id': randomUUID() } }
    assert.equal(await statusOf(app.post('mercadopago', otherRequest)), 400)
    const otherId = await rejection(
      await app.post('mercadopago', signed, { 'data.id': 's2', 'type': 'payment' })
    )
    assert.equal(otherId.status, 400)
    const noId = await rejection(await app.post('mercadopago', signed, {}))
    assert.match(noId.message, /data\.id/)
    assert.lengthOf(await app.rows('events'), 0)

    const fresh = await app.post('mercadopago', signed)
    assert.equal(fresh.status, 200, await fresh.clone().text())
    assert.lengthOf(await app.rows('events'), 1)
  })

  test('mercadopago: an alphanumeric data.id is signed lowercased; the body cannot swap the id', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    app.mercadopago.set('/v1/payments/ABC123', mercadoPagoPayment('ABC123'))
    const requestId = randomUUID()
    const ts = Math.floor(Date.now() / 1000)
    const manifest = `id:abc123;request-id:${requestId};ts:${ts};`
    const v1 = createHmac('sha256', CREDENTIALS.mercadopago.webhookSecret)
      .update(manifest)
      .digest('hex')
    const headers = { ...json, 'x-signature': `ts=${ts},v1=${v1}`, 'x-request-id': requestId }
    const payload = HMAC_GATEWAY_FIXTURES.mercadopago.payload('ABC123')
    const response = await app.post(
      'mercadopago',
      { body: JSON.stringify(payload), headers },
      { 'data.id': 'ABC123' }
    )
    assert.equal(response.status, 200, await response.clone().text())

    const swapped = { ...(payload as object), data: { id: 'other' } }
    const { status, message } = await rejection(
      await app.post(
        'mercadopago',
        { body: JSON.stringify(swapped), headers },
        { 'data.id': 'ABC123' }
      )
    )
    assert.equal(status, 400)
    assert.match(message, /signed data\.id/)
  })

  test('mercadopago: a payment the API does not know, or an API that fails, is rejected before recording', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const unknown = sign('mercadopago', HMAC_GATEWAY_FIXTURES.mercadopago.payload('u1'))
    const { status, message } = await rejection(await app.post('mercadopago', unknown))
    assert.equal(status, 400)
    assert.match(message, /answered 404/)
    assert.lengthOf(await app.rows('events'), 0)
    assert.lengthOf(app.mercadopago.requests, 1)
    assert.equal(
      app.mercadopago.requests[0].headers.authorization,
      `Bearer ${CREDENTIALS.mercadopago.accessToken}`
    )
    // A forged delivery never reaches the API
    await app.post(
      'mercadopago',
      sign(
        'mercadopago',
        HMAC_GATEWAY_FIXTURES.mercadopago.payload('u2'),
        WRONG_CREDENTIALS_A.mercadopago
      )
    )
    assert.lengthOf(app.mercadopago.requests, 1)
  })

  test('square: the notification URL comes from config, so the Host the app sees does not matter', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const signed = sign('square', HMAC_GATEWAY_FIXTURES.square.payload('h1'))
    const response = await app.post('square', {
      ...signed,
      headers: { ...signed.headers, 'x-forwarded-host': 'evil.example' },
    })
    assert.equal(response.status, 200, await response.clone().text())
    const elsewhere = sign('square', HMAC_GATEWAY_FIXTURES.square.payload('h2'), {
      ...CREDENTIALS.square,
      notificationUrl: `${app.url}/payments/webhook/square`,
    })
    assert.equal(await statusOf(app.post('square', elsewhere)), 400)
  })

  test('square: the SDK accepts what signedWebhook signs, and the driver accepts the SDK test vectors', async ({
    assert,
  }) => {
    const { SquareDriver } = await import('../../src/payments/drivers/square.ts')
    const signed = sign('square', HMAC_GATEWAY_FIXTURES.square.payload('v1'))
    assert.isTrue(
      await WebhooksHelper.verifySignature({
        requestBody: signed.body,
        signatureHeader: signed.headers['x-square-hmacsha256-signature'],
        ...CREDENTIALS.square,
      })
    )
    // The vector Square's Node SDK tests verify
    const driver = new SquareDriver({
      signatureKey: 'Ibxx_5AKakO-3qeNVR61Dw',
      notificationUrl: 'https://webhook.site/679a4f3a-dcfa-49ee-bac5-9d0edad886b9',
    })
    const body =
      '{"merchant_id":"MLEFBHHSJGVHD","type":"webhooks.test_notification","event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2022-07-13T20:30:59.037339943Z","data":{"type":"webhooks","id":"bc368e64-01aa-407e-b46e-3231809b1129"}}'
    const request = (signature: string, raw = body) => ({
      rawBody: Buffer.from(raw),
      headers: { 'x-square-hmacsha256-signature': signature },
      query: {},
    })
    const event = driver.parse(request('GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4='), 'square')
    assert.deepEqual(
      [event.id, event.type],
      ['ac3ac95b-f97d-458c-a6e6-18981597e05f', 'webhooks.test_notification']
    )
    const escaped = new SquareDriver({
      signatureKey: 'signature-key',
      notificationUrl: 'https://webhook.site/webhooks',
    })
    assert.throws(
      () =>
        escaped.parse(
          request(
            'Cxt7+aTi4rKgcA0bC4g9EHdVtLSDWdqccmL5MvihU4U=',
            '{"data":{"type":"webhooks","id":">id<"}}'
          ),
          'square'
        ),
      /event type is missing/
    )
    assert.throws(
      () => driver.parse(request('1z2n3DEJJiUPKcPzQo1ftvbxGdw='), 'square'),
      /does not match/
    )
  })

  test('razorpay: the SDK accepts what signedWebhook signs, and the driver accepts the SDK test vector', async ({
    assert,
  }) => {
    const { RazorpayDriver } = await import('../../src/payments/drivers/razorpay.ts')
    const signed = sign('razorpay', HMAC_GATEWAY_FIXTURES.razorpay.payload('v1'))
    assert.isTrue(
      Razorpay.validateWebhookSignature(
        signed.body,
        signed.headers['x-razorpay-signature'],
        CREDENTIALS.razorpay.webhookSecret
      )
    )
    // The vector of the Razorpay Node SDK's own tests: the signature verifies, the toy body then fails as an event
    const driver = new RazorpayDriver({ webhookSecret: '123456' })
    const request = (signature: string) => ({
      rawBody: Buffer.from('{"a":1,"b":2,"c":{"d":3}}'),
      headers: { 'x-razorpay-signature': signature },
      query: {},
    })
    assert.throws(
      () =>
        driver.parse(
          request('2fe04e22977002e6c7cb553adab8b460cb9e2a4970d5953cb27a8472752e3bbc'),
          'razorpay'
        ),
      /has no payload/
    )
    assert.throws(() => driver.parse(request('sdfafds'), 'razorpay'), /does not match/)
  })
})
