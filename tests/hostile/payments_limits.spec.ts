import { request as httpRequest } from 'node:http'
import { test } from '@japa/runner'
import Stripe from 'stripe'
import { CREDENTIALS, fakeEvent, paymentsApp } from '../payments/helpers.ts'
import { FIXTURES } from '../payments/fixtures.ts'
import { signedWebhook } from '../../src/payments/testing.ts'

/** Stripe's own test signature for `body`, made `age` seconds ago */
function stripeSigned(body: string, age: number) {
  const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({
    payload: body,
    secret: CREDENTIALS.stripe.webhookSecret,
    timestamp: Math.floor(Date.now() / 1000) - age,
  })
  return { body, headers: { 'content-type': 'application/json', 'stripe-signature': header } }
}

/** Posts `chunks` with `transfer-encoding: chunked` (no content-length) */
function postChunked(url: string, chunks: Buffer[]) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json' } },
      (response) => {
        let body = ''
        response.on('data', (chunk) => (body += chunk))
        response.on('end', () => resolve({ status: response.statusCode!, body }))
      }
    )
    // The server may answer 413 and close before every chunk is written
    request.on('error', reject)
    for (const chunk of chunks) request.write(chunk)
    request.end()
  })
}

test.group('Payments limits: Stripe timestamp tolerance', () => {
  test('a delivery signed 301 s ago is rejected, one signed 299 s ago is accepted', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const old = await app.post(
      'stripe',
      stripeSigned(JSON.stringify(FIXTURES.stripe.payload('o1')), 301)
    )
    assert.equal(old.status, 400)
    assert.match(((await old.json()) as any).errors[0].message, /tolerance/i)
    const fresh = await app.post(
      'stripe',
      stripeSigned(JSON.stringify(FIXTURES.stripe.payload('o2')), 299)
    )
    assert.equal(fresh.status, 200)
    assert.lengthOf(await app.rows('payments'), 1)
  })
})

test.group('Payments limits: maxBodySize', () => {
  test('a Content-Length over maxBodySize is answered 413 with the Atrium error body', async ({
    assert,
  }) => {
    const app = await paymentsApp({ config: { maxBodySize: 1024 } })
    const signed = signedWebhook(
      'fake',
      fakeEvent('big', 'payment.succeeded', { paymentId: 'p', amount: 1, pad: 'x'.repeat(2000) }),
      CREDENTIALS.fake
    )
    const response = await app.post('fake', signed)
    assert.equal(response.status, 413)
    assert.deepEqual((await response.json()) as any, {
      errors: [
        {
          code: 'E_WEBHOOK_TOO_LARGE',
          message: `body of ${Buffer.byteLength(signed.body)} bytes is larger than maxBodySize (1024)`,
        },
      ],
    })
    const small = signedWebhook(
      'fake',
      fakeEvent('small', 'payment.succeeded', { paymentId: 'p', amount: 1 }),
      CREDENTIALS.fake
    )
    const accepted = await app.post('fake', small)
    assert.equal(accepted.status, 200)
    assert.lengthOf(await app.rows('events'), 1)
  })

  test('a chunked body over maxBodySize is answered 413 and records nothing', async ({
    assert,
  }) => {
    const app = await paymentsApp({ config: { maxBodySize: 1024 } })
    const chunks = Array.from({ length: 8 }, () => Buffer.from('x'.repeat(256)))
    const response = await postChunked(`${app.url}/payments/webhook/fake`, chunks)
    assert.equal(response.status, 413)
    assert.equal(JSON.parse(response.body).errors[0].code, 'E_WEBHOOK_TOO_LARGE')
    const under = await postChunked(`${app.url}/payments/webhook/fake`, [Buffer.from('{}')])
    assert.equal(under.status, 400, 'under the cap the body reaches the driver')
    assert.lengthOf(await app.rows('events'), 0)
  })
})

test.group('Payments limits: listeners', () => {
  test('a throwing or rejecting emitter listener never changes the response or the ledger', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const emitter = await app.app.container.make('emitter')
    const seen: string[] = []
    emitter.on('atrium:payments:payment.succeeded', () => {
      seen.push('sync')
      throw new Error('listener bug')
    })
    emitter.on('atrium:payments:payment.succeeded', async () => {
      seen.push('async')
      throw new Error('async listener bug')
    })
    emitter.on('atrium:payments:webhook.processed', () => {
      throw new Error('lifecycle listener bug')
    })
    const response = await app.deliver(
      'fake',
      fakeEvent('evt_l', 'payment.succeeded', { paymentId: 'p_l', amount: 5 })
    )
    assert.equal(response.status, 200)
    assert.deepEqual((await response.json()) as any, { received: true })
    const [event] = await app.rows('events')
    assert.equal(event.status, 'processed')
    assert.includeMembers(seen, ['sync', 'async'])
  })

  test('an emitter whose emit throws synchronously never changes the response or the ledger', async ({
    assert,
    cleanup,
  }) => {
    const app = await paymentsApp()
    const emitter = await app.app.container.make('emitter')
    const emit = emitter.emit
    let calls = 0
    // Adonis's own emitter always returns a promise; a replaced one may throw at once
    emitter.emit = (() => {
      calls++
      throw new Error('emitter bug')
    }) as any
    cleanup(() => {
      emitter.emit = emit
    })
    const response = await app.deliver(
      'fake',
      fakeEvent('evt_s', 'payment.succeeded', { paymentId: 'p_s', amount: 5 })
    )
    assert.equal(response.status, 200)
    assert.deepEqual((await response.json()) as any, { received: true })
    const [event] = await app.rows('events')
    assert.equal(event.status, 'processed')
    assert.isAbove(calls, 0)
  })
})
