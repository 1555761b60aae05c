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
