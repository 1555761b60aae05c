import { createHash, createHmac, createSign, generateKeyPairSync } from 'node:crypto'
import { test } from '@japa/runner'
import { gateways } from '../../src/payments/main.ts'
import { CREDENTIALS, WOOVI_PRIVATE_KEY, paymentsApp } from '../payments/helpers.ts'
import { FIXTURES } from '../payments/fixtures.ts'
import { gatewayStandIn } from '../payments/stand_ins.ts'

const JSON_HEADERS = { 'content-type': 'application/json' }

/** An EC P-256 key pair as PagBank signs with: DER SPKI public key, PEM private key */
function ecKeys() {
  return generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  })
}

/** ECDSA SHA256withECDSA over the raw body, DER, base64: PagBank's x-payload-signature */
function ecdsa(body: string, privateKey: string) {
  return createSign('sha256').update(body).sign(privateKey, 'base64')
}

/** PagBank's public-keys endpoint on loopback, serving `publicKey` (base64 DER) */
async function pagBankKeys(publicKey: Buffer) {
  return gatewayStandIn(({ method, url }) =>
    method === 'GET' && url === '/public-keys'
      ? { body: { public_key: publicKey.toString('base64'), created_at: 1_700_000_000 } }
      : { status: 404, body: {} }
  )
}

test.group('Payments forgery: gateways without a signature', () => {
  test('a forged InfinitePay delivery InfinitePay does not confirm is rejected and records nothing', async ({
    assert,
  }) => {
    const app = await paymentsApp({ infinitePayPaid: false })
    const forged = { ...(FIXTURES.infinitepay.payload('f1') as object), paid_amount: 999_999 }
    const response = await app.post('infinitepay', {
      body: JSON.stringify(forged),
      headers: JSON_HEADERS,
    })
    assert.equal(response.status, 400)
    assert.deepEqual((await response.json()) as any, {
      errors: [
        {
          code: 'E_WEBHOOK_REJECTED',
          message: 'InfinitePay does not confirm this transaction as paid',
          provider: 'infinitepay',
        },
      ],
    })
    assert.lengthOf(await app.rows('payments'), 0)
    assert.lengthOf(await app.rows('events'), 0)
    assert.deepEqual(app.infinitepay.requests[0].body, {
      handle: CREDENTIALS.infinitepay.handle,
      order_nsu: 'order-f1',
      transaction_nsu: 'tx-f1',
      slug: 'inv-f1',
    })
  })

  test('a real InfinitePay payment is recorded with the amount InfinitePay confirms, not the body', async ({
    assert,
  }) => {
    const app = await paymentsApp({ infinitePayPaid: false })
    app.infinitepay.pay('tx-r1', {
      order: 'order-r1',
      slug: 'inv-r1',
      amount: 1000,
      paid_amount: 1010,
    })
    const inflated = { ...(FIXTURES.infinitepay.payload('r1') as object), paid_amount: 999_999 }
    const response = await app.post('infinitepay', {
      body: JSON.stringify(inflated),
      headers: JSON_HEADERS,
    })
    assert.equal(response.status, 200)
    const [payment] = await app.rows('payments')
    assert.equal(payment.status, 'paid')
    assert.strictEqual(Number(payment.amount), 1010)
  })

  test('InfinitePay without a handle, or Efí without webhookHmac, is not served unless allowed', async ({
    assert,
  }) => {
    await assert.rejects(
      () => paymentsApp({ config: { providers: { infinitepay: gateways.infinitepay() } } }),
      /Missing webhook credential for provider "infinitepay".*handle.*INFINITEPAY_HANDLE/
    )
    await assert.rejects(
      () => paymentsApp({ config: { providers: { efi: gateways.efi() } } }),
      'Provider "efi" cannot verify its deliveries (route POST /payments/webhook/efi): set "providers.efi" webhookHmac in config/payments.ts (env EFI_WEBHOOK_HMAC), or add "efi" to allowUnverifiedWebhooks if mutual TLS in front of the app authenticates the gateway'
    )
  })

  test('a forged Efí pix[] without, or with a wrong, hmac parameter is rejected', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const body = JSON.stringify(FIXTURES.efi.payload('f2'))
    for (const query of [undefined, { hmac: 'guessed' }, { hmac: '' }]) {
      const response = await app.post('efi', { body, headers: JSON_HEADERS }, query)
      assert.equal(response.status, 400, JSON.stringify(query))
    }
    assert.lengthOf(await app.rows('payments'), 0)
    // The parameter Efí sends, as registered on the webhook URL
    const good = await app.post('efi', { body, headers: JSON_HEADERS }, { hmac: 'efi-hmac-value' })
    assert.equal(good.status, 200)
  })

  test('Efí listed in allowUnverifiedWebhooks (mutual TLS in front) is served without hmac', async ({
    assert,
  }) => {
    const app = await paymentsApp({
      config: { providers: { efi: gateways.efi() }, allowUnverifiedWebhooks: ['efi'] },
    })
    const response = await app.post('efi', {
      body: JSON.stringify(FIXTURES.efi.payload('m1')),
      headers: JSON_HEADERS,
    })
    assert.equal(response.status, 200)
  })
})

test.group('Payments forgery: PagBank x-payload-signature', () => {
  test('a delivery carrying only x-payload-signature is verified with the key from public-keys, fetched once', async ({
    assert,
  }) => {
    const { publicKey, privateKey } = ecKeys()
    const keys = await pagBankKeys(publicKey)
    const app = await paymentsApp({
      config: {
        providers: {
          pagbank: gateways.pagbank({
            token: 'api-token',
            publicKeysUrl: `${keys.url}/public-keys`,
          }),
        },
      },
    })
    for (const id of ['e1', 'e2']) {
      const body = JSON.stringify(FIXTURES.pagbank.payload(id))
      const response = await app.post('pagbank', {
        body,
        headers: { ...JSON_HEADERS, 'x-payload-signature': ecdsa(body, privateKey) },
      })
      assert.equal(response.status, 200, await response.clone().text())
    }
    assert.lengthOf(await app.rows('payments'), 2)
    assert.lengthOf(keys.requests, 1)
    assert.equal(keys.requests[0].headers.authorization, 'Bearer api-token')
  })

  test('while public-keys fails, signed deliveries are rejected and PagBank is asked once, not per delivery', async ({
    assert,
  }) => {
    const { privateKey } = ecKeys()
    const keys = await gatewayStandIn(() => ({ status: 503, body: { message: 'unavailable' } }))
    const app = await paymentsApp({
      config: {
        providers: {
          pagbank: gateways.pagbank({
            token: 'api-token',
            publicKeysUrl: `${keys.url}/public-keys`,
          }),
        },
      },
    })
    const responses = await Promise.all(
      ['u1', 'u2', 'u3', 'u4'].map((id) => {
        const body = JSON.stringify(FIXTURES.pagbank.payload(id))
        return app.post('pagbank', {
          body,
          headers: { ...JSON_HEADERS, 'x-payload-signature': ecdsa(body, privateKey) },
        })
      })
    )
    assert.deepEqual(
      responses.map((response) => response.status),
      [400, 400, 400, 400]
    )
    assert.equal(
      ((await responses[3].json()) as any).errors[0].message,
      'PagBank public-keys answered 503'
    )
    assert.lengthOf(keys.requests, 1)
    assert.lengthOf(await app.rows('events'), 0)
  })

  test('a configured public key verifies without a request; a signature by another key is rejected', async ({
    assert,
  }) => {
    const { publicKey } = ecKeys()
    const other = ecKeys()
    const app = await paymentsApp({
      config: {
        providers: {
          pagbank: gateways.pagbank({ publicKey: publicKey.toString('base64') }),
        },
      },
    })
    const body = JSON.stringify(FIXTURES.pagbank.payload('e3'))
    const response = await app.post('pagbank', {
      body,
      headers: { ...JSON_HEADERS, 'x-payload-signature': ecdsa(body, other.privateKey) },
    })
    assert.equal(response.status, 400)
    assert.equal(
      ((await response.json()) as any).errors[0].message,
      'x-payload-signature does not match the body'
    )
    assert.lengthOf(await app.rows('payments'), 0)
  })

  test('a signature over other bytes is rejected even when the token hash would match', async ({
    assert,
  }) => {
    const { publicKey, privateKey } = ecKeys()
    const token = CREDENTIALS.pagbank.webhookToken
    const app = await paymentsApp({
      config: {
        providers: {
          pagbank: gateways.pagbank({
            webhookToken: token,
            publicKey: publicKey.toString('base64'),
          }),
        },
      },
    })
    const body = JSON.stringify(FIXTURES.pagbank.payload('e4'))
    const response = await app.post('pagbank', {
      body,
      headers: {
        ...JSON_HEADERS,
        'x-payload-signature': ecdsa(`${body} `, privateKey),
        'x-authenticity-token': createHash('sha256').update(`${token}-${body}`).digest('hex'),
      },
    })
    assert.equal(response.status, 400)
  })
})

/**
 * Each gateway's documented signing formula, written out here with
 * node:crypto (never through signedWebhook), so a scheme wrong in both the
 * driver and the test helper cannot pass.
 */
const INDEPENDENT: Record<
  string,
  {
    providers?: () => Record<string, any>
    sign: (
      body: string,
      key: 'right' | 'wrong'
    ) => { headers: Record<string, string>; query?: Record<string, string> }
  }
> = {
  'abacatepay': {
    sign: (body, key) => ({
      headers: {
        ...JSON_HEADERS,
        'x-webhook-signature': createHmac(
          'sha256',
          key === 'right' ? CREDENTIALS.abacatepay.publicKey : 'another-public-key'
        )
          .update(body)
          .digest('base64'),
      },
      query: { webhookSecret: CREDENTIALS.abacatepay.webhookSecret },
    }),
  },
  'asaas': {
    sign: (_body, key) => ({
      headers: {
        ...JSON_HEADERS,
        'asaas-access-token': key === 'right' ? CREDENTIALS.asaas.webhookToken : 'asaas-token-124',
      },
    }),
  },
  'woovi': {
    sign: (body, key) => {
      const privateKey =
        key === 'right'
          ? WOOVI_PRIVATE_KEY
          : generateKeyPairSync('rsa', {
              modulusLength: 2048,
              privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
              publicKeyEncoding: { type: 'spki', format: 'pem' },
            }).privateKey
      return {
        headers: {
          ...JSON_HEADERS,
          'x-webhook-signature': createSign('RSA-SHA256').update(body).sign(privateKey, 'base64'),
        },
      }
    },
  },
  'woovi-hmac': {
    providers: () => ({ 'woovi-hmac': gateways.woovi({ webhookSecret: 'woovi-hmac-secret' }) }),
    sign: (body, key) => ({
      headers: {
        ...JSON_HEADERS,
        'x-openpix-signature': createHmac('sha1', key === 'right' ? 'woovi-hmac-secret' : 'other')
          .update(body)
          .digest('base64'),
      },
    }),
  },
  'pagbank': {
    sign: (body, key) => ({
      headers: {
        ...JSON_HEADERS,
        'x-authenticity-token': createHash('sha256')
          .update(`${key === 'right' ? CREDENTIALS.pagbank.webhookToken : 'wrong-token'}-${body}`)
          .digest('hex'),
      },
    }),
  },
  'efi': {
    sign: (_body, key) => ({
      headers: JSON_HEADERS,
      query: { hmac: key === 'right' ? CREDENTIALS.efi.webhookHmac : 'efi-hmac-valuf' },
    }),
  },
}

test.group('Payments independent signing', () => {
  for (const [route, scheme] of Object.entries(INDEPENDENT)) {
    const fixture = FIXTURES[route.replace('-hmac', '')]

    test(`${route}: a delivery signed from the documented formula is accepted`, async ({
      assert,
    }) => {
      const app = await paymentsApp(
        scheme.providers ? { config: { providers: scheme.providers() } } : {}
      )
      const body = JSON.stringify(fixture.payload('i1'))
      const { headers, query } = scheme.sign(body, 'right')
      const response = await app.post(route, { body, headers }, query)
      assert.equal(response.status, 200, await response.clone().text())
      assert.lengthOf(await app.rows('payments'), 1)
    })

    test(`${route}: the same formula with a wrong key is rejected with 400`, async ({ assert }) => {
      const app = await paymentsApp(
        scheme.providers ? { config: { providers: scheme.providers() } } : {}
      )
      const body = JSON.stringify(fixture.payload('i2'))
      const { headers, query } = scheme.sign(body, 'wrong')
      const response = await app.post(route, { body, headers }, query)
      assert.equal(response.status, 400)
      assert.equal(((await response.json()) as any).errors[0].code, 'E_WEBHOOK_REJECTED')
      assert.lengthOf(await app.rows('payments'), 0)
    })
  }
})
