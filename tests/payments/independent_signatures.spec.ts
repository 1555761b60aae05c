import { createHash, createHmac, createSign, generateKeyPairSync } from 'node:crypto'
import { test } from '@japa/runner'
import { gateways } from '../../src/payments/main.ts'
import { CREDENTIALS, allProviders, paymentsApp } from './helpers.ts'
import { FIXTURES } from './fixtures.ts'

/**
 * Deliveries signed without `signedWebhook` or any driver code: each
 * signature is either a vector the gateway published or its documented
 * formula written out here with node:crypto. A scheme changed in both the
 * driver and `signedWebhook` passes tests/payments/gateways.spec.ts, never this.
 */

/** The key AbacatePay publishes for X-Webhook-Signature (the same for every account) */
const ABACATEPAY_PUBLISHED_KEY =
  't9dXRhHHo3yDEj5pVDYz0frf7q6bMKyMRmxxCPIPp3RCplBfXRxqlC6ZpiWmOqj4L63qEaeUOtrCI8P0VMUgo6iIga2ri9ogaHFs0WIIywSMg0q7RmBfybe1E5XJcfC4IW3alNqym0tXoAKkzvfEjZxV6bE0oG2zJrNNYmUCKZyV0KZ3JS8Votf9EAWWYdiDkMkpbMdPggfh1EqHlVkMiTady6jOR3hyzGEHrIz2Ret0xHKMbiqkr9HS1JhNHDX9'

/** Woovi's published public key for x-webhook-signature, base64 of the PEM as Woovi lists it */
const WOOVI_PUBLISHED_KEY =
  'LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0KTUlHZk1BMEdDU3FHU0liM0RRRUJBUVVBQTRHTkFEQ0JpUUtCZ1FDLytOdElranpldnZxRCtJM01NdjNiTFhEdApwdnhCalk0QnNSclNkY2EzcnRBd01jUllZdnhTbmQ3amFnVkxwY3RNaU94UU84aWVVQ0tMU1dIcHNNQWpPL3paCldNS2Jxb0c4TU5waS91M2ZwNnp6MG1jSENPU3FZc1BVVUcxOWJ1VzhiaXM1WloySVpnQk9iV1NwVHZKMGNuajYKSEtCQUE4MkpsbitsR3dTMU13SURBUUFCCi0tLS0tRU5EIFBVQkxJQyBLRVktLS0tLQo='

/**
 * The example delivery and signature Woovi publishes in its signature
 * validation guide (and its SDKs' tests verify): signed with Woovi's own
 * private key. It predates the `event` field, so the driver verifies it and
 * then refuses it for naming no event.
 */
const WOOVI_PUBLISHED_PAYLOAD = `{ "pixQrCode": null, "charge": { "status": "COMPLETED", "customer": { "name": "Antonio Victor", "taxID": { "taxID": "12345678976", "type": "BR:CPF" }, "email": "antoniocliente@example.com", "correlationID": "4979ceba-2132-4292-bd90-bee7fb2125e4" }, "value": 1000, "comment": "Pagamento OpenPix", "transactionID": "ea83401ed4834b3ea6f1f283b389af29", "correlationID": "417bae21-3d08-4cdb-9c2d-fee63c89e9e4", "paymentLinkID": "34697ed2-3790-4b60-8512-e7465b142d84", "createdAt": "2021-03-12T12:43:54.528Z", "updatedAt": "2021-03-12T12:44:09.360Z", "brCode": "https://api.openpix.com.br/openpix/openpix/testing?transactionID=ea83401ed4834b3ea6f1f283b389af29" }, "pix": { "charge": { "status": "COMPLETED", "customer": { "name": "Antonio Victor", "taxID": { "taxID": "12345678976", "type": "BR:CPF" }, "email": "antoniocliente@example.com", "correlationID": "4979ceba-2132-4292-bd90-bee7fb2125e4" }, "value": 1000, "comment": "Pagamento OpenPix", "transactionID": "ea83401ed4834b3ea6f1f283b389af29", "correlationID": "417bae21-3d08-4cdb-9c2d-fee63c89e9e4", "paymentLinkID": "34697ed2-3790-4b60-8512-e7465b142d84", "createdAt": "2021-03-12T12:43:54.528Z", "updatedAt": "2021-03-12T12:44:09.360Z" }, "customer": { "correlationID": "9134e286-6f71-427a-bf00-241681624586", "email": "email1@example.com", "name": "Loma", "phone": "+5511999999999", "taxID": { "taxID": "47043622050", "type": "BR:CPF" } }, "payer": { "correlationID": "9134e286-6f71-427a-bf00-241681624586", "email": "email1@example.com", "name": "Loma", "phone": "+5511999999999", "taxID": { "taxID": "47043622050", "type": "BR:CPF" } }, "time": "2021-03-12T12:44:09.269Z", "value": 1, "transactionID": "ea83401ed4834b3ea6f1f283b389af29", "infoPagador": "OpenPix testing" }, "company": { "id": "624f46f9e93f9f521c8308d7", "name": "Pizzaria do José", "taxID": "4722767300014" }, "account": { "clientId": "ZOJ64B9B-ZM1W-89MI-4UCI-OP2LVIU6NY75" } }`
const WOOVI_PUBLISHED_SIGNATURE =
  'lL2nnXgmLFGgxJ8+jCDguqouU4ucrIxYJcU5SPrJFaNcJajTJHYVldqc/z4YFIjAjtPEALe699WosgPY08W7CLpidvtm06Qwa4YMB0l/DcTS93O91NdSH/adjugEKiOb76Zj/0jB8mqOmWCFYbweOBa17bssuEkd5Lw7Q5L314Y='

const JSON_TYPE = { 'content-type': 'application/json' }

type App = Awaited<ReturnType<typeof paymentsApp>>

async function rejection(response: Response) {
  const body = (await response.json()) as any
  return `${response.status} ${body.errors?.[0]?.message}`
}

/** Posts a fixture delivery signed by `headers`/`query`, expects it recorded as paid */
async function assertAccepted(
  assert: any,
  app: App,
  provider: string,
  id: string,
  signed: { body: string; headers: Record<string, string>; query?: Record<string, string> }
) {
  const response = await app.post(provider, signed)
  assert.equal(response.status, 200, await response.clone().text())
  const rows = await app.rows('payments')
  const payment = rows.find((row: any) => row.payment_id === FIXTURES[provider].paymentId(id))
  assert.equal(payment?.status, 'paid')
  assert.strictEqual(Number(payment.amount), FIXTURES[provider].amount)
}

test.group('Payments: deliveries signed independently of Atrium', () => {
  test('abacatepay: base64 HMAC-SHA256 of the raw body keyed with the published key, plus the URL secret', async ({
    assert,
  }) => {
    const app = await paymentsApp({
      config: {
        providers: {
          ...allProviders(),
          abacatepay: gateways.abacatepay({
            webhookSecret: 'abacate-url-secret',
            publicKey: ABACATEPAY_PUBLISHED_KEY,
          }),
        },
      },
    })
    const body = JSON.stringify(FIXTURES.abacatepay.payload('i1'))
    const hmac = createHmac('sha256', ABACATEPAY_PUBLISHED_KEY).update(body)
    const signature = hmac.digest('base64')
    const query = { webhookSecret: 'abacate-url-secret' }
    await assertAccepted(assert, app, 'abacatepay', 'i1', {
      body,
      headers: { ...JSON_TYPE, 'x-webhook-signature': signature },
      query,
    })
    // The same HMAC in hex is not the documented encoding
    const hex = createHmac('sha256', ABACATEPAY_PUBLISHED_KEY).update(body).digest('hex')
    const wrongEncoding = await app.post('abacatepay', {
      body,
      headers: { ...JSON_TYPE, 'x-webhook-signature': hex },
      query,
    })
    assert.equal(await rejection(wrongEncoding), '400 X-Webhook-Signature does not match the body')
  })

  test('asaas: the asaas-access-token header carries the configured token as is', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const body = JSON.stringify(FIXTURES.asaas.payload('i2'))
    await assertAccepted(assert, app, 'asaas', 'i2', {
      body,
      headers: { ...JSON_TYPE, 'asaas-access-token': 'asaas-token-123' },
    })
    const other = await app.post('asaas', {
      body: JSON.stringify(FIXTURES.asaas.payload('i3')),
      headers: { ...JSON_TYPE, 'asaas-access-token': 'asaas-token-12' },
    })
    assert.equal(other.status, 400)
  })

  test("woovi: Woovi's published delivery verifies against its published key; one changed byte does not", async ({
    assert,
  }) => {
    const app = await paymentsApp({
      config: {
        providers: {
          ...allProviders(),
          woovi: gateways.woovi({ webhookPublicKey: WOOVI_PUBLISHED_KEY }),
        },
      },
    })
    const headers = { ...JSON_TYPE, 'x-webhook-signature': WOOVI_PUBLISHED_SIGNATURE }
    const genuine = await app.post('woovi', { body: WOOVI_PUBLISHED_PAYLOAD, headers })
    // Past the signature: refused only for what the 2021 example lacks
    assert.equal(await rejection(genuine), '400 Woovi delivery names no event')
    const altered = await app.post('woovi', {
      body: WOOVI_PUBLISHED_PAYLOAD.replace('"value": 1000', '"value": 9000'),
      headers,
    })
    assert.equal(await rejection(altered), '400 x-webhook-signature does not match the body')
  })

  test('woovi: an RSA-SHA256 signature of the raw body, and the deprecated base64 HMAC-SHA1', async ({
    assert,
  }) => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
    const app = await paymentsApp({
      config: {
        providers: {
          ...allProviders(),
          woovi: gateways.woovi({ webhookPublicKey: pem }),
          legacy: gateways.woovi({ webhookSecret: 'openpix_hmac_secret' }),
        },
      },
    })
    const body = JSON.stringify(FIXTURES.woovi.payload('i4'))
    const signature = createSign('RSA-SHA256').update(body).sign(privateKey, 'base64')
    await assertAccepted(assert, app, 'woovi', 'i4', {
      body,
      headers: { ...JSON_TYPE, 'x-webhook-signature': signature },
    })

    const legacyBody = JSON.stringify(FIXTURES.woovi.payload('i5'))
    const hmac = createHmac('sha1', 'openpix_hmac_secret').update(legacyBody).digest('base64')
    const response = await app.post('legacy', {
      body: legacyBody,
      headers: { ...JSON_TYPE, 'x-openpix-signature': hmac },
    })
    assert.equal(response.status, 200, await response.clone().text())
    const rows = await app.rows('payments')
    const [payment] = rows.filter((row: any) => row.provider === 'legacy')
    assert.equal(payment.payment_id, FIXTURES.woovi.paymentId('i5'))
  })

  test('pagbank: x-authenticity-token is the SHA-256 hex of "<token>-<raw body>"; x-payload-signature an ECDSA SHA-256 DER signature', async ({
    assert,
  }) => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    const app = await paymentsApp({
      config: {
        providers: {
          ...allProviders(),
          signed: gateways.pagbank({
            webhookToken: 'unused',
            publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
          }),
        },
      },
    })
    const body = JSON.stringify(FIXTURES.pagbank.payload('i6'))
    const token = createHash('sha256').update(`pagbank-token-xyz-${body}`).digest('hex')
    await assertAccepted(assert, app, 'pagbank', 'i6', {
      body,
      headers: { ...JSON_TYPE, 'x-authenticity-token': token },
    })
    // An HMAC keyed with the token is not PagBank's scheme
    const hmac = createHmac('sha256', CREDENTIALS.pagbank.webhookToken).update(body).digest('hex')
    const keyed = await app.post('pagbank', {
      body,
      headers: { ...JSON_TYPE, 'x-authenticity-token': hmac },
    })
    assert.equal(await rejection(keyed), '400 x-authenticity-token does not match the body')

    const signedBody = JSON.stringify(FIXTURES.pagbank.payload('i7'))
    const signature = createSign('sha256')
      .update(signedBody)
      .sign({ key: privateKey, dsaEncoding: 'der' }, 'base64')
    const response = await app.post('signed', {
      body: signedBody,
      headers: { ...JSON_TYPE, 'x-payload-signature': signature },
    })
    assert.equal(response.status, 200, await response.clone().text())
    const rows = await app.rows('payments')
    const payment = rows.find((row: any) => row.provider === 'signed')
    assert.equal(payment?.payment_id, FIXTURES.pagbank.paymentId('i7'))
  })

  test('efi: the hmac query parameter registered on the webhook URL, compared as is', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const body = JSON.stringify(FIXTURES.efi.payload('i8'))
    await assertAccepted(assert, app, 'efi', 'i8', {
      body,
      headers: JSON_TYPE,
      query: { hmac: 'efi-hmac-value' },
    })
    const missing = await app.post('efi', { body, headers: JSON_TYPE, query: {} })
    assert.equal(await rejection(missing), '400 missing or wrong hmac query parameter')
  })

  test('fake: x-fake-signature is the hex HMAC-SHA256 of the raw body', async ({ assert }) => {
    const app = await paymentsApp()
    const body = JSON.stringify(FIXTURES.fake.payload('i9'))
    const signature = createHmac('sha256', 'fake-secret').update(body).digest('hex')
    await assertAccepted(assert, app, 'fake', 'i9', {
      body,
      headers: { ...JSON_TYPE, 'x-fake-signature': signature },
    })
  })
})
