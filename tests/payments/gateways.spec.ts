import { generateKeyPairSync } from 'node:crypto'
import { test } from '@japa/runner'
import Stripe from 'stripe'
import { signedWebhook } from '../../src/payments/testing.ts'
import { CREDENTIALS, paymentsApp, statusOf } from './helpers.ts'
import { FIXTURES, SIGNED, WRONG_CREDENTIALS } from './fixtures.ts'

const SIGNATURE_HEADER: Record<string, string> = {
  stripe: 'stripe-signature',
  abacatepay: 'x-webhook-signature',
  asaas: 'asaas-access-token',
  woovi: 'x-webhook-signature',
  pagbank: 'x-authenticity-token',
  fake: 'x-fake-signature',
}

function sign(provider: string, payload: unknown, credentials = (CREDENTIALS as any)[provider]) {
  if (provider === 'stripe') {
    // Stripe deliveries in tests are signed by the SDK's own helper
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload)
    const stripe = new Stripe('sk_test_unused')
    const header = stripe.webhooks.generateTestHeaderString({
      payload: body,
      secret: credentials.webhookSecret,
    })
    return { body, headers: { 'content-type': 'application/json', 'stripe-signature': header } }
  }
  return signedWebhook(provider, payload, credentials)
}

function tamper(provider: string, body: string) {
  if (provider === 'adyen') {
    return body.replace('"value":1130', '"value":9130')
  }
  return body.replace('café', 'cafe')
}

test.group('Payments gateways', () => {
  for (const provider of Object.keys(FIXTURES)) {
    const fixture = FIXTURES[provider]

    test(`${provider}: a delivery signed as the gateway signs it is recorded and synced`, async ({
      assert,
    }) => {
      const app = await paymentsApp()
      const response = await app.post(provider, sign(provider, fixture.payload('a1')))
      assert.equal(response.status, 200, await response.clone().text())
      assert.deepEqual((await response.json()) as any, { received: true })
      const [event] = await app.rows('events')
      assert.equal(event.status, 'processed')
      assert.equal(event.provider, provider)
      const [payment] = await app.rows('payments')
      assert.equal(payment.payment_id, fixture.paymentId('a1'))
      assert.equal(payment.status, 'paid')
      assert.strictEqual(Number(payment.amount), fixture.amount)
      assert.equal(payment.external_reference, fixture.externalReference('a1'))
    })

    test(`${provider}: pretty-printed and non-ASCII JSON verifies against the raw bytes`, async ({
      assert,
    }) => {
      const app = await paymentsApp()
      let signed = sign(provider, JSON.stringify(fixture.payload('p1'), null, 2))
      if (provider === 'adyen') {
        signed = { ...signed, body: JSON.stringify(JSON.parse(signed.body), null, 4) }
      }
      assert.include(signed.body, '\n')
      assert.include(signed.body, 'São João')
      const response = await app.post(provider, signed)
      assert.equal(response.status, 200, await response.clone().text())
      assert.lengthOf(await app.rows('payments'), 1)
    })

    if (!(SIGNED as readonly string[]).includes(provider)) {
      test(`${provider}: signs nothing, so a malformed body is rejected with 400`, async ({
        assert,
      }) => {
        const app = await paymentsApp()
        const response = await app.post(provider, {
          body: '{"unexpected": true}',
          headers: { 'content-type': 'application/json' },
        })
        assert.equal(response.status, 400)
        assert.lengthOf(await app.rows('events'), 0)
      })
      continue
    }

    if (provider === 'asaas') {
      test('asaas: the access token authenticates the sender, not the body (Asaas signs no body)', async ({
        assert,
      }) => {
        const app = await paymentsApp()
        const signed = sign(provider, fixture.payload('t1'))
        const response = await app.post(provider, {
          ...signed,
          body: tamper(provider, signed.body),
        })
        assert.equal(response.status, 200)
      })
      test('asaas: a wrong token with an intact body is rejected', async ({ assert }) => {
        const app = await paymentsApp()
        const signed = sign(provider, fixture.payload('t2'), { webhookToken: 'asaas-token-124' })
        assert.equal(await statusOf(app.post(provider, signed)), 400)
        const [audit] = await app.rows('audit')
        assert.equal(audit.type, 'webhook.rejected')
      })
    }

    test(`${provider}: a tampered body is rejected with 400 and never recorded`, async ({
      assert,
    }) => {
      if (provider === 'asaas') {
        // A token gateway: the tampering that can be caught is a tampered token
        const signed = sign(provider, fixture.payload('t1'))
        signed.headers['asaas-access-token'] += 'x'
        const app = await paymentsApp()
        assert.equal(await statusOf(app.post(provider, signed)), 400)
        assert.lengthOf(await app.rows('events'), 0)
        return
      }
      const app = await paymentsApp()
      const signed = sign(provider, fixture.payload('t1'))
      const response = await app.post(provider, { ...signed, body: tamper(provider, signed.body) })
      assert.equal(response.status, 400)
      assert.deepEqual(((await response.json()) as any).errors[0].code, 'E_WEBHOOK_REJECTED')
      assert.lengthOf(await app.rows('events'), 0)
      assert.lengthOf(await app.rows('payments'), 0)
      const [audit] = await app.rows('audit')
      assert.equal(audit.type, 'webhook.rejected')
      assert.equal(audit.provider, provider)
    })

    test(`${provider}: a delivery signed with the wrong key is rejected`, async ({ assert }) => {
      const app = await paymentsApp()
      const wrong =
        provider === 'woovi'
          ? {
              privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
            }
          : WRONG_CREDENTIALS[provider]
      const response = await app.post(provider, sign(provider, fixture.payload('w1'), wrong))
      assert.equal(response.status, 400)
      assert.lengthOf(await app.rows('events'), 0)
    })

    test(`${provider}: a delivery without its signature is rejected`, async ({ assert }) => {
      const app = await paymentsApp()
      const signed = sign(provider, fixture.payload('m1'))
      if (provider === 'adyen') {
        const body = JSON.parse(signed.body)
        delete body.notificationItems[0].NotificationRequestItem.additionalData.hmacSignature
        signed.body = JSON.stringify(body)
      } else {
        delete (signed.headers as Record<string, string>)[SIGNATURE_HEADER[provider]]
      }
      const response = await app.post(provider, signed)
      assert.equal(response.status, 400)
      assert.lengthOf(await app.rows('events'), 0)
    })
  }

  test('abacatepay: a valid signature without the webhookSecret query parameter is rejected', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const signed = sign('abacatepay', FIXTURES.abacatepay.payload('q1'))
    assert.equal(await statusOf(app.post('abacatepay', signed, {})), 400)
    assert.equal(await statusOf(app.post('abacatepay', signed, { webhookSecret: 'nope' })), 400)
    assert.lengthOf(await app.rows('events'), 0)
  })

  test('woovi: the deprecated X-OpenPix-Signature HMAC-SHA1 verifies when no public key is set', async ({
    assert,
  }) => {
    const { gateways } = await import('../../src/payments/main.ts')
    const app = await paymentsApp({
      config: { providers: { woovi: gateways.woovi({ webhookSecret: 'legacy-secret' }) } },
    })
    const payload = FIXTURES.woovi.payload('h1')
    const good = signedWebhook('woovi', payload, { webhookSecret: 'legacy-secret' })
    assert.equal(await statusOf(app.post('woovi', good)), 200)
    const bad = signedWebhook('woovi', FIXTURES.woovi.payload('h2'), { webhookSecret: 'other' })
    assert.equal(await statusOf(app.post('woovi', bad)), 400)
  })

  test('woovi: a configured public key wins over the secret', async ({ assert }) => {
    const { gateways } = await import('../../src/payments/main.ts')
    const { WOOVI_PUBLIC_KEY } = await import('./helpers.ts')
    const app = await paymentsApp({
      config: {
        providers: {
          woovi: gateways.woovi({
            webhookPublicKey: Buffer.from(WOOVI_PUBLIC_KEY).toString('base64'),
            webhookSecret: 'legacy-secret',
          }),
        },
      },
    })
    const hmacOnly = signedWebhook('woovi', FIXTURES.woovi.payload('k1'), {
      webhookSecret: 'legacy-secret',
    })
    assert.equal(await statusOf(app.post('woovi', hmacOnly)), 400)
    const rsa = signedWebhook('woovi', FIXTURES.woovi.payload('k2'), CREDENTIALS.woovi)
    assert.equal(await statusOf(app.post('woovi', rsa)), 200)
  })

  test('adyen: matches the HMAC test vector Adyen publishes', async ({ assert }) => {
    const { adyenItemSignature } = await import('../../src/payments/drivers/adyen.ts')
    const item = {
      pspReference: '7914073381342284',
      merchantAccountCode: 'TestMerchant',
      merchantReference: 'TestPayment-1407325143704',
      amount: { value: 1130, currency: 'EUR' },
      eventCode: 'AUTHORISATION',
      success: 'true',
    }
    assert.equal(
      adyenItemSignature(item, '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'),
      'coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0='
    )
  })

  test('adyen: one bad item rejects the whole batch before any is mapped', async ({ assert }) => {
    const app = await paymentsApp()
    const item = (psp: string) => ({
      NotificationRequestItem: {
        amount: { currency: 'EUR', value: 500 },
        eventCode: 'AUTHORISATION',
        merchantAccountCode: 'TestMerchant',
        merchantReference: `ref-${psp}`,
        pspReference: psp,
        success: 'true',
      },
    })
    const signed = signedWebhook(
      'adyen',
      { live: 'false', notificationItems: [item('A1'), item('A2'), item('A3')] },
      CREDENTIALS.adyen
    )
    const body = JSON.parse(signed.body)
    body.notificationItems[1].NotificationRequestItem.amount.value = 1
    const response = await app.post('adyen', { ...signed, body: JSON.stringify(body) })
    assert.equal(response.status, 400)
    assert.match(((await response.json()) as any).errors[0].message, /notificationItems\[1\]/)
    assert.lengthOf(await app.rows('events'), 0)
    assert.lengthOf(await app.rows('payments'), 0)

    const good = await app.post('adyen', signed)
    assert.equal(good.status, 200)
    assert.lengthOf(await app.rows('events'), 3)
  })

  test('efi: every pix of a batch becomes one event; a short txid is not a reference', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const response = await app.post('efi', {
      query: { hmac: CREDENTIALS.efi.webhookHmac },
      body: JSON.stringify({
        pix: [
          {
            endToEndId: 'E1',
            txid: 'a'.repeat(26),
            valor: '10.00',
            horario: '2024-01-01T00:00:00Z',
          },
          { endToEndId: 'E2', txid: 'short', valor: '0.99', horario: '2024-01-01T00:00:00Z' },
        ],
      }),
      headers: { 'content-type': 'application/json' },
    })
    assert.equal(response.status, 200)
    const payments = await app.rows('payments')
    assert.deepEqual(
      payments.map((row) => [row.payment_id, Number(row.amount), row.external_reference]),
      [
        ['a'.repeat(26), 1000, 'a'.repeat(26)],
        ['E2', 99, null],
      ]
    )
  })
})
