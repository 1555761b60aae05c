import { createHash, createHmac, createSign, generateKeyPairSync } from 'node:crypto'
import { test } from '@japa/runner'
import Stripe from 'stripe'
import { AbacatePayDriver } from '../../src/payments/drivers/abacatepay.ts'
import { AdyenDriver, adyenSigningString } from '../../src/payments/drivers/adyen.ts'
import { AsaasDriver } from '../../src/payments/drivers/asaas.ts'
import { EfiDriver } from '../../src/payments/drivers/efi.ts'
import { FakeDriver } from '../../src/payments/drivers/fake.ts'
import { header, jsonObject, queryValue, safeCompare } from '../../src/payments/drivers/helpers.ts'
import { PagBankDriver } from '../../src/payments/drivers/pagbank.ts'
import { StripeDriver } from '../../src/payments/drivers/stripe.ts'
import { WooviDriver } from '../../src/payments/drivers/woovi.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { FIXTURES } from './fixtures.ts'

/**
 * Each driver's signature check called directly, with requests signed here
 * from the gateways' documented formulas (never through `signedWebhook`):
 * what is accepted, and the exact reason for each refusal. Fast enough to
 * be the `drivers-verify` mutation group's test command.
 */

function request(
  body: string,
  headers: WebhookRequest['headers'] = {},
  query: WebhookRequest['query'] = {}
): WebhookRequest {
  return { rawBody: Buffer.from(body), headers, query }
}

const one = (parsed: unknown) => (Array.isArray(parsed) ? parsed[0] : parsed) as any

test.group('Driver helpers', () => {
  test('header reads one non-empty value; a repeated or empty header is absent', ({ assert }) => {
    const headers = { 'x-one': 'v', 'x-twice': ['a', 'b'], 'x-empty': '' }
    assert.equal(header(request('', headers), 'x-one'), 'v')
    assert.equal(header(request('', headers), 'X-One'), 'v')
    assert.isUndefined(header(request('', headers), 'x-twice'))
    assert.isUndefined(header(request('', headers), 'x-empty'))
    assert.isUndefined(header(request('', headers), 'x-none'))
  })

  test('queryValue reads one non-empty value; a repeated or empty parameter is absent', ({
    assert,
  }) => {
    const query = { one: 'v', twice: ['a', 'b'], empty: '' }
    assert.equal(queryValue(request('', {}, query), 'one'), 'v')
    assert.isUndefined(queryValue(request('', {}, query), 'twice'))
    assert.isUndefined(queryValue(request('', {}, query), 'empty'))
    assert.isUndefined(queryValue(request('', {}, query), 'none'))
  })

  test('safeCompare: equal strings or buffers only', ({ assert }) => {
    assert.isTrue(safeCompare('secret', 'secret'))
    assert.isTrue(safeCompare(Buffer.from('secret'), Buffer.from('secret')))
    assert.isFalse(safeCompare('secret', 'secreT'))
    assert.isFalse(safeCompare('secret', 'secret1'))
    assert.isFalse(safeCompare('secret1', 'secret'))
    assert.isFalse(safeCompare('secret', ''))
  })

  test('jsonObject: a JSON object only', ({ assert }) => {
    assert.deepEqual(jsonObject(Buffer.from('{"a":1}')), { a: 1 })
    assert.throws(() => jsonObject(Buffer.from('{"a":')), 'body is not valid JSON')
    for (const json of ['[1]', 'null', '5', '"text"']) {
      assert.throws(() => jsonObject(Buffer.from(json)), /^body is not a JSON object$/, json)
    }
  })
})

test.group('Driver signature checks', () => {
  test('abacatepay: both credentials, the URL secret, then the base64 HMAC of the raw body', ({
    assert,
  }) => {
    const driver = new AbacatePayDriver({ webhookSecret: 'url-secret', publicKey: 'hmac-key' })
    const body = JSON.stringify(FIXTURES.abacatepay.payload('v1'))
    const signature = createHmac('sha256', 'hmac-key').update(body).digest('base64')
    const query = { webhookSecret: 'url-secret' }
    const good = request(body, { 'x-webhook-signature': signature }, query)
    assert.equal(one(driver.parse(good, 'abacatepay')).data.paymentId, 'bill_v1')
    for (const options of [{ webhookSecret: 'url-secret' }, { publicKey: 'hmac-key' }]) {
      assert.throws(
        () => new AbacatePayDriver(options).parse(good, 'abacatepay'),
        'abacatepay needs both webhookSecret and publicKey'
      )
    }
    for (const wrong of [{}, { webhookSecret: 'url-secreT' }, { webhookSecret: ['url-secret'] }]) {
      assert.throws(
        () => driver.parse(request(body, { 'x-webhook-signature': signature }, wrong), 'a'),
        'missing or wrong webhookSecret query parameter'
      )
    }
    assert.throws(
      () => driver.parse(request(body, {}, query), 'a'),
      'missing X-Webhook-Signature header'
    )
    assert.throws(
      () => driver.parse(request(`${body} `, { 'x-webhook-signature': signature }, query), 'a'),
      'X-Webhook-Signature does not match the body'
    )
  })

  test('asaas: the configured token, exactly', ({ assert }) => {
    const driver = new AsaasDriver({ webhookToken: 'asaas-token' })
    const body = JSON.stringify(FIXTURES.asaas.payload('v2'))
    const event = one(driver.parse(request(body, { 'asaas-access-token': 'asaas-token' }), 'x'))
    assert.equal(event.data.paymentId, 'pay_v2')
    assert.throws(
      () => new AsaasDriver({}).parse(request(body, { 'asaas-access-token': 'x' }), 'x'),
      'asaas has no webhookToken'
    )
    assert.throws(() => driver.parse(request(body), 'x'), 'missing asaas-access-token header')
    for (const token of ['asaas-tokeN', 'asaas-token ', 'asaas']) {
      assert.throws(
        () => driver.parse(request(body, { 'asaas-access-token': token }), 'x'),
        'asaas-access-token does not match'
      )
    }
  })

  test('woovi: RSA-SHA256 with the public key as PEM or base64 PEM; the deprecated HMAC-SHA1 only without a key', ({
    assert,
  }) => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 })
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
    const body = JSON.stringify(FIXTURES.woovi.payload('v3'))
    const signature = createSign('RSA-SHA256').update(body).sign(privateKey, 'base64')
    const hmac = createHmac('sha1', 'legacy').update(body).digest('base64')
    for (const key of [pem, Buffer.from(pem).toString('base64')]) {
      const driver = new WooviDriver({ webhookPublicKey: key, webhookSecret: 'legacy' })
      const event = one(driver.parse(request(body, { 'x-webhook-signature': signature }), 'w'))
      assert.equal(event.data.paymentId, 'chg_v3')
      // With a key, the HMAC header alone is not enough
      assert.throws(
        () => driver.parse(request(body, { 'x-openpix-signature': hmac }), 'w'),
        'missing x-webhook-signature header'
      )
      for (const bad of [signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')), '%%%', 'AAAA']) {
        assert.throws(
          () => driver.parse(request(body, { 'x-webhook-signature': bad }), 'w'),
          'x-webhook-signature does not match the body'
        )
      }
    }
    const legacy = new WooviDriver({ webhookSecret: 'legacy' })
    assert.equal(
      one(legacy.parse(request(body, { 'x-openpix-signature': hmac }), 'w')).data.paymentId,
      'chg_v3'
    )
    assert.throws(() => legacy.parse(request(body), 'w'), 'missing X-OpenPix-Signature header')
    assert.throws(
      () => legacy.parse(request(`${body}\n`, { 'x-openpix-signature': hmac }), 'w'),
      'X-OpenPix-Signature does not match the body'
    )
    assert.throws(
      () => new WooviDriver({}).parse(request(body, { 'x-openpix-signature': hmac }), 'w'),
      'woovi has neither webhookPublicKey nor webhookSecret'
    )
  })

  test('pagbank: ECDSA x-payload-signature first, else the SHA-256 hex of "<token>-<raw body>"', async ({
    assert,
  }) => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    const der = publicKey.export({ type: 'spki', format: 'der' }).toString('base64')
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
    const body = JSON.stringify(FIXTURES.pagbank.payload('v4'))
    const signature = createSign('sha256')
      .update(body)
      .sign({ key: privateKey, dsaEncoding: 'der' }, 'base64')
    const token = createHash('sha256').update(`tok-${body}`).digest('hex')
    for (const key of [der, pem]) {
      const driver = new PagBankDriver({ publicKey: key, webhookToken: 'tok' })
      const signed = request(body, { 'x-payload-signature': signature })
      assert.equal(one(driver.parse(signed, 'p')).data.paymentId, 'CHAR_v4')
      // The signature wins: a wrong one is not saved by a right token
      assert.throws(
        () =>
          driver.parse(
            request(body, { 'x-payload-signature': 'AAAA', 'x-authenticity-token': token }),
            'p'
          ),
        'x-payload-signature does not match the body'
      )
      assert.throws(
        () => driver.parse(request(`${body} `, { 'x-payload-signature': signature }), 'p'),
        'x-payload-signature does not match the body'
      )
    }
    const unsigned = new PagBankDriver({ webhookToken: 'tok' })
    assert.throws(
      () => unsigned.parse(request(body, { 'x-payload-signature': signature }), 'p'),
      'no PagBank public key to check x-payload-signature (call confirm first)'
    )
    for (const driver of [unsigned, new PagBankDriver({ token: 'tok' })]) {
      for (const value of [token, token.toUpperCase()]) {
        const event = one(driver.parse(request(body, { 'x-authenticity-token': value }), 'p'))
        assert.equal(event.data.paymentId, 'CHAR_v4')
      }
    }
    // webhookToken wins over the API token
    const both = new PagBankDriver({ webhookToken: 'tok', token: 'api' })
    assert.equal(
      one(both.parse(request(body, { 'x-authenticity-token': token }), 'p')).data.paymentId,
      'CHAR_v4'
    )
    assert.throws(
      () => unsigned.parse(request(body), 'p'),
      'missing x-payload-signature or x-authenticity-token header'
    )
    assert.throws(
      () =>
        new PagBankDriver({ publicKey: der }).parse(
          request(body, { 'x-authenticity-token': token }),
          'p'
        ),
      'pagbank has no webhookToken for x-authenticity-token'
    )
    for (const wrong of [
      createHash('sha256').update(`tok${body}`).digest('hex'),
      createHash('sha256').update(`tok-${body} `).digest('hex'),
      createHmac('sha256', 'tok').update(body).digest('hex'),
    ]) {
      assert.throws(
        () => unsigned.parse(request(body, { 'x-authenticity-token': wrong }), 'p'),
        'x-authenticity-token does not match the body'
      )
    }
  })

  test('woovi and pagbank: a configured key the check cannot use rejects every delivery', ({
    assert,
  }) => {
    // An Ed25519 key makes node:crypto's RSA/ECDSA verify throw instead of answering false
    const { publicKey } = generateKeyPairSync('ed25519')
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
    const woovi = new WooviDriver({ webhookPublicKey: pem })
    assert.throws(
      () =>
        woovi.parse(
          request(JSON.stringify(FIXTURES.woovi.payload('v8')), { 'x-webhook-signature': 'AAAA' }),
          'w'
        ),
      'x-webhook-signature does not match the body'
    )
    const pagbank = new PagBankDriver({ publicKey: pem })
    assert.throws(
      () =>
        pagbank.parse(
          request(JSON.stringify(FIXTURES.pagbank.payload('v8')), {
            'x-payload-signature': 'AAAA',
          }),
          'p'
        ),
      'x-payload-signature does not match the body'
    )
  })

  test('efi: the hmac query parameter when one is configured; nothing to check otherwise', ({
    assert,
  }) => {
    const body = JSON.stringify(FIXTURES.efi.payload('v5'))
    const driver = new EfiDriver({ webhookHmac: 'efi-hmac' })
    const events = driver.parse(request(body, {}, { hmac: 'efi-hmac' }), 'e')
    assert.equal(one(events).data.paymentId, FIXTURES.efi.paymentId('v5'))
    for (const query of [{}, { hmac: 'efi-hmaC' }, { hmac: ['efi-hmac'] }, { hmac: '' }]) {
      assert.throws(
        () => driver.parse(request(body, {}, query), 'e'),
        'missing or wrong hmac query parameter'
      )
    }
    assert.lengthOf(new EfiDriver().parse(request(body), 'e'), 1)
  })

  test('fake: the hex HMAC-SHA256 of the raw body', ({ assert }) => {
    const driver = new FakeDriver({ secret: 's' })
    const body = JSON.stringify(FIXTURES.fake.payload('v6'))
    const signature = createHmac('sha256', 's').update(body).digest('hex')
    assert.equal(
      one(driver.parse(request(body, { 'x-fake-signature': signature }), 'f')).id,
      'fake_v6'
    )
    assert.throws(
      () => new FakeDriver({}).parse(request(body, { 'x-fake-signature': signature }), 'f'),
      'fake has no secret'
    )
    assert.throws(() => driver.parse(request(body), 'f'), 'missing x-fake-signature header')
    const base64 = createHmac('sha256', 's').update(body).digest('base64')
    assert.throws(
      () => driver.parse(request(body, { 'x-fake-signature': base64 }), 'f'),
      'x-fake-signature does not match the body'
    )
  })

  test("stripe: the SDK's signature header, within the tolerance (300 s unless set)", ({
    assert,
  }) => {
    const sdk = new Stripe('sk_test_unused')
    const body = JSON.stringify(FIXTURES.stripe.payload('v7'))
    const signed = (secret: string, age = 0) =>
      request(body, {
        'stripe-signature': sdk.webhooks.generateTestHeaderString({
          payload: body,
          secret,
          timestamp: Math.floor(Date.now() / 1000) - age,
        }),
      })
    const driver = new StripeDriver({ webhookSecret: 'whsec_v' })
    assert.equal(one(driver.parse(signed('whsec_v'), 's')).data.paymentId, 'pi_v7')
    assert.equal(one(driver.parse(signed('whsec_v', 290), 's')).data.paymentId, 'pi_v7')
    assert.throws(
      () => driver.parse(signed('whsec_v', 310), 's'),
      /^Stripe signature check failed: .*tolerance/i
    )
    assert.throws(
      () => driver.parse(signed('whsec_other'), 's'),
      /^Stripe signature check failed: No signatures found matching the expected signature for payload/
    )
    assert.throws(() => driver.parse(request(body), 's'), 'missing Stripe-Signature header')
    assert.throws(
      () => new StripeDriver({}).parse(signed('whsec_v'), 's'),
      'stripe has no webhookSecret'
    )
    const strict = new StripeDriver({ webhookSecret: 'whsec_v', tolerance: 10 })
    assert.throws(() => strict.parse(signed('whsec_v', 20), 's'), /tolerance/i)
    const empty = JSON.stringify({ id: 'evt_x', type: 'payment_intent.succeeded', data: {} })
    const emptySigned = sdk.webhooks.generateTestHeaderString({ payload: empty, secret: 'whsec_v' })
    assert.throws(
      () => driver.parse(request(empty, { 'stripe-signature': emptySigned }), 's'),
      'Stripe event has no data.object'
    )
  })

  test('adyen: every item verified with the hex key before any is mapped', ({ assert }) => {
    const key = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'
    const driver = new AdyenDriver({ hmacKey: key })
    // Adyen's published test vector, signed with the hex-decoded key
    const vector = {
      pspReference: '7914073381342284',
      merchantAccountCode: 'TestMerchant',
      merchantReference: 'TestPayment-1407325143704',
      amount: { value: 1130, currency: 'EUR' },
      eventCode: 'AUTHORISATION',
      success: 'true',
      additionalData: { hmacSignature: 'coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=' },
    }
    const delivery = (...items: unknown[]) =>
      request(JSON.stringify({ live: 'false', notificationItems: items }))
    const [event] = driver.parse(delivery({ NotificationRequestItem: vector }), 'a')
    assert.equal(one(event).data.paymentId, '7914073381342284')
    // The signing string: eight fields joined by ':', a missing one empty
    assert.equal(
      adyenSigningString({ ...vector, originalReference: null }),
      '7914073381342284::TestMerchant:TestPayment-1407325143704:1130:EUR:AUTHORISATION:true'
    )
    assert.equal(adyenSigningString({}), ':::::::')
    const tampered = { ...vector, amount: { value: 9130, currency: 'EUR' } }
    assert.throws(
      () =>
        driver.parse(
          delivery({ NotificationRequestItem: vector }, { NotificationRequestItem: tampered }),
          'a'
        ),
      'notificationItems[1] has a wrong hmacSignature'
    )
    const unsigned = { ...vector, additionalData: {} }
    assert.throws(
      () => driver.parse(delivery({ NotificationRequestItem: unsigned }), 'a'),
      'notificationItems[0] has no additionalData.hmacSignature'
    )
    const bare: Record<string, unknown> = { ...vector }
    delete bare.additionalData
    assert.throws(
      () => driver.parse(delivery({ NotificationRequestItem: bare }), 'a'),
      'notificationItems[0] has no additionalData.hmacSignature'
    )
    assert.throws(
      () => driver.parse(delivery({ other: vector }), 'a'),
      'notificationItems[0] has no NotificationRequestItem'
    )
    assert.throws(() => driver.parse(delivery(), 'a'), 'Adyen delivery has no notificationItems')
    assert.throws(
      () => driver.parse(request('{"notificationItems":{}}'), 'a'),
      'Adyen delivery has no notificationItems'
    )
    assert.throws(
      () => new AdyenDriver({}).parse(delivery({ NotificationRequestItem: vector }), 'a'),
      'adyen has no hmacKey'
    )
  })
})
