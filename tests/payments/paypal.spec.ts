import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from '@japa/runner'
import { gateways } from '../../src/payments/main.ts'
import {
  isPayPalCertificateUrl,
  MAX_CERTIFICATE_BYTES,
  PayPalCertificateStore,
} from '../../src/payments/drivers/paypal_certificates.ts'
import { PAYPAL_TEST_CERTIFICATE_ORIGIN, signedWebhook } from '../../src/payments/testing.ts'
import type { PaymentDriver } from '../../src/payments/types.ts'
import { PAYPAL_CERT, paypal, SECRETS, webhookRequest } from './sdk_gateway_fixtures.ts'
import { gatewayStandIn } from './stand_ins.ts'
import { makeCertificate, paypalCertificateHost } from './sdk_gateway_stand_ins.ts'

async function deliver(
  driver: PaymentDriver,
  certUrl: string,
  key: string,
  privateKey = PAYPAL_CERT.privateKey,
  timestamp?: number
) {
  const request = webhookRequest(
    signedWebhook('paypal', paypal.capture(key), {
      privateKey,
      certUrl,
      webhookId: SECRETS.paypalWebhookId,
      timestamp,
    })
  )
  await driver.confirm!(request)
  return driver.parse(request, 'paypal')
}

test.group('Payments PayPal: certificates and the verify API', () => {
  test('only https certificate URLs under paypal.com are fetched', ({ assert }) => {
    for (const url of [
      'https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-1d93a270',
      'https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42',
      'https://api-m.paypal.com/v1/notifications/certs/CERT-1',
    ]) {
      assert.isTrue(isPayPalCertificateUrl(new URL(url)), url)
    }
    for (const url of [
      'http://api.paypal.com/v1/notifications/certs/CERT-1',
      'https://api.paypal.com.evil.example/v1/notifications/certs/CERT-1',
      'https://evilpaypal.com/v1/notifications/certs/CERT-1',
      'https://paypal.com@evil.example/v1/notifications/certs/CERT-1',
      'https://user:pw@api.paypal.com/v1/notifications/certs/CERT-1',
      'https://user@api.paypal.com/v1/notifications/certs/CERT-1',
      'https://:pw@api.paypal.com/v1/notifications/certs/CERT-1',
      'https://api.paypal.com:8443/v1/notifications/certs/CERT-1',
      'https://api.paypal.com/v1/oauth2/token',
    ]) {
      assert.isFalse(isPayPalCertificateUrl(new URL(url)), url)
    }
  })

  test('without the test option a loopback certificate URL is refused before any fetch', async ({
    assert,
  }) => {
    const host = await paypalCertificateHost()
    const certUrl = host.serve('CERT-1', PAYPAL_CERT.certificate)
    const driver = await gateways.paypal({ webhookId: SECRETS.paypalWebhookId }).resolver()
    await assert.rejects(
      () => deliver(driver, certUrl, 'x1'),
      'paypal-cert-url is not a PayPal certificate URL'
    )
    assert.lengthOf(host.hits, 0)
  })

  test('the test origin must be a loopback address', ({ assert }) => {
    assert.throws(
      () => new PayPalCertificateStore({ testOrigin: 'https://certs.example.com' }),
      /must be a loopback address/
    )
  })

  test('a certificate is fetched once and cached for later deliveries', async ({ assert }) => {
    const host = await paypalCertificateHost()
    const certUrl = host.serve('CERT-cache', PAYPAL_CERT.certificate)
    const driver = await gateways
      .paypal({ webhookId: SECRETS.paypalWebhookId, [PAYPAL_TEST_CERTIFICATE_ORIGIN]: host.origin })
      .resolver()
    await Promise.all([deliver(driver, certUrl, 'c1'), deliver(driver, certUrl, 'c2')])
    await deliver(driver, certUrl, 'c3')
    assert.deepEqual(host.hits, ['/v1/notifications/certs/CERT-cache'])
    // The cached certificate still refuses a signature made with another key
    await assert.rejects(
      () => deliver(driver, certUrl, 'c4', makeCertificate().privateKey),
      'paypal-transmission-sig does not match the body'
    )
  })

  test('an oversized, expired or missing certificate rejects the delivery', async ({ assert }) => {
    const host = await paypalCertificateHost()
    const driver = await gateways
      .paypal({ webhookId: SECRETS.paypalWebhookId, [PAYPAL_TEST_CERTIFICATE_ORIGIN]: host.origin })
      .resolver()
    const big = host.serve('CERT-big', 'A'.repeat(MAX_CERTIFICATE_BYTES + 1))
    await assert.rejects(
      () => deliver(driver, big, 'b1'),
      'the PayPal certificate is larger than expected'
    )
    // Three days on, the two-day certificate has expired
    const old = host.serve('CERT-old', PAYPAL_CERT.certificate)
    const realNow = Date.now
    const later = realNow() + 3 * 24 * 60 * 60_000
    Date.now = () => later
    try {
      await assert.rejects(
        () => deliver(driver, old, 'b2', PAYPAL_CERT.privateKey, later / 1000),
        'the PayPal certificate is not valid now'
      )
    } finally {
      Date.now = realNow
    }
    await assert.rejects(
      () => deliver(driver, `${host.origin}/v1/notifications/certs/CERT-none`, 'b3'),
      'the PayPal certificate URL answered 404'
    )
    // A failed URL is not fetched again at once: forged deliveries cannot make every request call out
    await assert.rejects(
      () => deliver(driver, big, 'b4'),
      'the PayPal certificate is larger than expected'
    )
    assert.equal(host.hits.filter((hit) => hit.endsWith('CERT-big')).length, 1)
  })

  test('verifyWithApi asks PayPal with client credentials and trusts only SUCCESS', async ({
    assert,
  }) => {
    let verdict = 'SUCCESS'
    const api = await gatewayStandIn(({ url, headers }) => {
      if (url === '/v1/oauth2/token') {
        const expected = `Basic ${Buffer.from('client-id:client-secret').toString('base64')}`
        return headers.authorization === expected
          ? { body: { access_token: 'A21-token', token_type: 'Bearer', expires_in: 32400 } }
          : { status: 401, body: { error: 'invalid_client' } }
      }
      if (url === '/v1/notifications/verify-webhook-signature') {
        return headers.authorization === 'Bearer A21-token'
          ? { body: { verification_status: verdict } }
          : { status: 401, body: {} }
      }
      return { status: 404, body: {} }
    })
    const driver = await gateways
      .paypal({
        webhookId: SECRETS.paypalWebhookId,
        clientId: 'client-id',
        clientSecret: 'client-secret',
        verifyWithApi: true,
        apiBaseUrl: api.url,
      })
      .resolver()
    const certUrl = 'https://api.paypal.com/v1/notifications/certs/CERT-api'
    const event = (await deliver(driver, certUrl, 'v1')) as any
    assert.equal(event.type, 'payment.succeeded')
    const check = api.requests.find((r) => r.url.endsWith('verify-webhook-signature'))!
    assert.equal(check.body.webhook_id, SECRETS.paypalWebhookId)
    assert.equal(check.body.cert_url, certUrl)
    assert.equal(check.body.auth_algo, 'SHA256withRSA')
    assert.equal(check.body.webhook_event.id, 'WH-v1')
    verdict = 'FAILURE'
    await assert.rejects(
      () => deliver(driver, certUrl, 'v2'),
      'PayPal verify-webhook-signature did not confirm the delivery'
    )
  })
})

test.group('Payments PayPal: the certificate store', () => {
  /** Runs `body` with Date.now moved by `offsetMs` */
  async function at<T>(offsetMs: number, body: () => Promise<T>) {
    const realNow = Date.now
    const moved = realNow() + offsetMs
    Date.now = () => moved
    try {
      return await body()
    } finally {
      Date.now = realNow
    }
  }

  test('a cached key is kept for ttlMs, never past the certificate expiry', async ({ assert }) => {
    const host = await paypalCertificateHost()
    const url = host.serve('CERT-ttl', PAYPAL_CERT.certificate)
    const store = new PayPalCertificateStore({ testOrigin: host.origin })
    const key = await store.publicKey(url)
    assert.equal(key.asymmetricKeyType, 'rsa')
    assert.strictEqual(await at(23 * 60 * 60_000, () => store.publicKey(url)), key)
    assert.lengthOf(host.hits, 1)
    // Past the default 24 hours the certificate is fetched again
    await at(25 * 60 * 60_000, () => store.publicKey(url))
    assert.lengthOf(host.hits, 2)
    const short = new PayPalCertificateStore({ testOrigin: host.origin, ttlMs: 1000 })
    await short.publicKey(url)
    await at(2000, () => short.publicKey(url))
    assert.lengthOf(host.hits, 4)
    // A ttl longer than the two-day certificate ends at its expiry
    const long = new PayPalCertificateStore({ testOrigin: host.origin, ttlMs: 10 * 86_400_000 })
    await long.publicKey(url)
    await assert.rejects(
      () => at(3 * 86_400_000, () => long.publicKey(url)),
      'the PayPal certificate is not valid now'
    )
    assert.lengthOf(host.hits, 6)
  })

  test('a certificate not valid yet, unreadable or unreachable is refused by name', async ({
    assert,
  }) => {
    const host = await paypalCertificateHost()
    const store = new PayPalCertificateStore({ testOrigin: host.origin })
    const early = host.serve('CERT-early', PAYPAL_CERT.certificate)
    await assert.rejects(
      () => at(-86_400_000, () => store.publicKey(early)),
      'the PayPal certificate is not valid now'
    )
    await assert.rejects(
      () => store.publicKey(host.serve('CERT-junk', 'not a certificate')),
      'the PayPal certificate could not be read'
    )
    const closed = new PayPalCertificateStore({ testOrigin: 'http://127.0.0.1:9' })
    await assert.rejects(
      () => closed.publicKey('http://127.0.0.1:9/v1/notifications/certs/CERT-1'),
      'the PayPal certificate could not be fetched'
    )
    await assert.rejects(() => store.publicKey('::'), 'paypal-cert-url is not a URL')
    for (const url of [
      `${host.origin}/v1/oauth2/token`,
      'http://127.0.0.1:1/v1/notifications/certs/CERT-1',
    ]) {
      await assert.rejects(
        () => store.publicKey(url),
        'paypal-cert-url is not a PayPal certificate URL'
      )
    }
    for (const origin of ['http://localhost:4010', 'http://[::1]:4010']) {
      assert.doesNotThrow(() => new PayPalCertificateStore({ testOrigin: origin }))
    }
  })

  test('a failed URL is fetched again after 30 seconds', async ({ assert }) => {
    const host = await paypalCertificateHost()
    const store = new PayPalCertificateStore({ testOrigin: host.origin })
    const url = `${host.origin}/v1/notifications/certs/CERT-later`
    await assert.rejects(() => store.publicKey(url), 'the PayPal certificate URL answered 404')
    await assert.rejects(
      () => at(29_000, () => store.publicKey(url)),
      'the PayPal certificate URL answered 404'
    )
    assert.lengthOf(host.hits, 1)
    host.serve('CERT-later', PAYPAL_CERT.certificate)
    await at(31_000, () => store.publicKey(url))
    assert.lengthOf(host.hits, 2)
  })

  test('at most 8 certificates are cached; the oldest is dropped first', async ({ assert }) => {
    const host = await paypalCertificateHost()
    const store = new PayPalCertificateStore({ testOrigin: host.origin })
    const urls = Array.from({ length: 9 }, (_, i) =>
      host.serve(`CERT-${i}`, PAYPAL_CERT.certificate)
    )
    for (const url of urls) await store.publicKey(url)
    await store.publicKey(urls[8])
    await store.publicKey(urls[1])
    assert.lengthOf(host.hits, 9)
    await store.publicKey(urls[0])
    assert.lengthOf(host.hits, 10)
  })
})

test.group('Payments PayPal: what the verification cannot use is a refusal', () => {
  test('a certificate whose key cannot check RSA-SHA256 rejects every delivery', async ({
    assert,
  }) => {
    const host = await paypalCertificateHost()
    // node:crypto throws when asked to verify RSA-SHA256 with an Ed25519 key
    const certUrl = host.serve('CERT-ed25519', makeCertificate(2, undefined, 'ed25519').certificate)
    const driver = await gateways
      .paypal({ webhookId: SECRETS.paypalWebhookId, [PAYPAL_TEST_CERTIFICATE_ORIGIN]: host.origin })
      .resolver()
    await assert.rejects(
      () => deliver(driver, certUrl, 'e1'),
      'paypal-transmission-sig does not match the body'
    )
  })

  test('a body of exactly 16 KiB is read; every failed URL is remembered', async ({ assert }) => {
    const host = await paypalCertificateHost()
    const store = new PayPalCertificateStore({ testOrigin: host.origin })
    const edge = host.serve('CERT-edge', 'A'.repeat(MAX_CERTIFICATE_BYTES))
    await assert.rejects(() => store.publicKey(edge), 'the PayPal certificate could not be read')
    const other = `${host.origin}/v1/notifications/certs/CERT-missing`
    await assert.rejects(() => store.publicKey(other), 'the PayPal certificate URL answered 404')
    await assert.rejects(() => store.publicKey(edge), 'the PayPal certificate could not be read')
    assert.lengthOf(host.hits, 2)
  })

  test('an OAuth refusal is never taken as a token, and PayPal is not asked', async ({
    assert,
  }) => {
    let oauth: { status?: number; body: unknown } = { status: 401, body: { access_token: 'x' } }
    const api = await gatewayStandIn(({ url }) =>
      url === '/v1/oauth2/token' ? oauth : { body: { verification_status: 'SUCCESS' } }
    )
    const driver = await gateways
      .paypal({
        webhookId: SECRETS.paypalWebhookId,
        clientId: 'client-id',
        clientSecret: 'client-secret',
        verifyWithApi: true,
        apiBaseUrl: api.url,
      })
      .resolver()
    const certUrl = 'https://api.paypal.com/v1/notifications/certs/CERT-api'
    for (const answer of [oauth, { body: { token_type: 'Bearer' } }, { body: 'not json' }]) {
      oauth = answer
      await assert.rejects(
        () => deliver(driver, certUrl, 'o1'),
        'PayPal verify-webhook-signature could not be reached'
      )
    }
    assert.isFalse(api.requests.some((request) => request.url.includes('verify-webhook')))
    const token = api.requests[0]
    assert.equal(token.method, 'POST')
    assert.equal(token.headers.accept, 'application/json')
  })
})

test.group('Payments PayPal: redirects', () => {
  test('a certificate URL that redirects is refused, never followed', async ({
    assert,
    cleanup,
  }) => {
    const host = await paypalCertificateHost()
    const target = host.serve('CERT-target', PAYPAL_CERT.certificate)
    const redirecting = createServer((_request, response) => {
      response.writeHead(302, { location: target })
      response.end()
    })
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve))
    cleanup(
      () =>
        new Promise<void>((resolve) => {
          redirecting.close(() => resolve())
          redirecting.closeAllConnections()
        })
    )
    const origin = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`
    const store = new PayPalCertificateStore({ testOrigin: origin })
    await assert.rejects(
      () => store.publicKey(`${origin}/v1/notifications/certs/CERT-moved`),
      'the PayPal certificate could not be fetched'
    )
    assert.lengthOf(host.hits, 0)
  })
})
