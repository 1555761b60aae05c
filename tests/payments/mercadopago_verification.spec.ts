/**
 * Mercado Pago, database-free: the signed manifest, its tolerance and the
 * resource read refuse each malformed, forged or unanswered notification by
 * name, and a forged one never reaches the API.
 */
import { test } from '@japa/runner'
import { MercadoPagoDriver, mercadoPagoManifest } from '../../src/payments/drivers/mercadopago.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { notification, type Notice, SECRET, setup, TOKEN } from './mercadopago_notifications.ts'
import { gatewayStandIn } from './stand_ins.ts'

test.group('Payments Mercado Pago: verification and reading refuse by name', () => {
  test('the manifest: absent parts left out, alphanumeric ids lowercased', ({ assert }) => {
    assert.equal(mercadoPagoManifest('ABC123', 'req', '1'), 'id:abc123;request-id:req;ts:1;')
    assert.equal(mercadoPagoManifest('AB-12', undefined, '1'), 'id:AB-12;ts:1;')
    assert.equal(mercadoPagoManifest(undefined, 'req', '1'), 'request-id:req;ts:1;')
    assert.equal(mercadoPagoManifest('x1 ', 'r', '2'), 'id:x1 ;request-id:r;ts:2;')
  })

  test('signatures: lowercased ids, no request id, ts in seconds or milliseconds', async ({
    assert,
  }) => {
    const { deliver } = await setup({ accessToken: undefined })
    const body = { topic: 'merchant_order' }
    const accepted: Notice[] = [
      { dataId: 'MO1', signedId: 'mo1', body },
      { dataId: 'MO-1', body },
      { dataId: 'mo1', requestId: '', body },
      { dataId: 'mo1', ts: String(Date.now()), body },
      { dataId: 'mo1', ts: String(Math.floor(Date.now() / 1000) - 290), body },
    ]
    for (const notice of accepted) {
      const event = await deliver(notice)
      assert.equal(event.type, 'merchant_order', JSON.stringify(notice))
    }
    // The parts are read trimmed, in either order
    const { driver } = await setup({ accessToken: undefined })
    const request = notification({ dataId: 'mo1', body })
    const [ts, v1] = (request.headers['x-signature'] as string).split(',')
    request.headers['x-signature'] = ` ${v1.replace('=', ' = ')} , ${ts} `
    await driver.confirm(request)
    assert.equal(driver.parse(request, 'mercadopago').type, 'merchant_order')
    // A part without "=" is no part: a bare "tsx" must not be read as a ts
    const extra = notification({ dataId: 'mo1', body })
    extra.headers['x-signature'] = `${extra.headers['x-signature']},tsx,v1x`
    await driver.confirm(extra)
    assert.equal(driver.parse(extra, 'mercadopago').type, 'merchant_order')
  })

  test('the tolerance includes its last second', async ({ assert, cleanup }) => {
    const { driver } = await setup({ accessToken: undefined })
    const ts = 1_800_000_000
    const realNow = Date.now
    cleanup(() => {
      Date.now = realNow
    })
    const request = notification({
      dataId: 'mo1',
      ts: String(ts),
      body: { topic: 'merchant_order' },
    })
    Date.now = () => (ts + 300) * 1000
    await driver.confirm(request)
    Date.now = () => (ts + 300) * 1000 + 1
    await assert.rejects(
      () => driver.confirm(request),
      'x-signature timestamp is outside the 300-second tolerance'
    )
  })

  test('each malformed or forged notification is refused before the API', async ({ assert }) => {
    const { api, driver } = await setup()
    const good = notification({ dataId: '1001' })
    const malformed = 'x-signature is not "ts=<timestamp>,v1=<hex>"'
    const v1 = /v1=([0-9a-f]+)/.exec(good.headers['x-signature'] as string)![1]
    const now = Math.floor(Date.now() / 1000)
    const cases: [WebhookRequest, string][] = [
      [{ ...good, headers: {} }, 'missing x-signature header'],
      [{ ...good, headers: { 'x-signature': `v1=${v1}` } }, malformed],
      [{ ...good, headers: { 'x-signature': `ts=${now}` } }, malformed],
      [{ ...good, headers: { 'x-signature': `ts=${now}x,v1=${v1}` } }, malformed],
      [{ ...good, headers: { 'x-signature': `ts=x${now},v1=${v1}` } }, malformed],
      [{ ...good, headers: { 'x-signature': `ts=12345678901234567,v1=${v1}` } }, malformed],
      [
        { ...good, query: {} },
        'missing data.id query parameter: Mercado Pago signs the notified id there',
      ],
      [
        { ...good, query: { 'data.id': '1002' } },
        'x-signature does not match data.id, x-request-id and ts',
      ],
      [
        { ...good, headers: { ...good.headers, 'x-request-id': 'other' } },
        'x-signature does not match data.id, x-request-id and ts',
      ],
      [
        notification({ dataId: '1001', secret: 'other' }),
        'x-signature does not match data.id, x-request-id and ts',
      ],
      [notification({ dataId: 'AB1' }), 'x-signature does not match data.id, x-request-id and ts'],
      [
        notification({ dataId: '1001', ts: String(now - 400) }),
        'x-signature timestamp is outside the 300-second tolerance',
      ],
      [
        notification({ dataId: '1001', ts: String(now + 400) }),
        'x-signature timestamp is outside the 300-second tolerance',
      ],
      [
        notification({ dataId: '1001', ts: String((now - 400) * 1000) }),
        'x-signature timestamp is outside the 300-second tolerance',
      ],
      [notification({ dataId: '1001', body: 'not json' }), 'body is not valid JSON'],
      [
        notification({ dataId: '1001', body: { data: { id: '1001' } } }),
        'notification type is missing',
      ],
      [
        notification({ dataId: '1001', body: { type: 'payment', data: { id: '1002' } } }),
        'data.id of the body is not the signed data.id',
      ],
    ]
    for (const [request, message] of cases) {
      await assert.rejects(() => driver.confirm(request), message)
    }
    const strict = new MercadoPagoDriver({ webhookSecret: SECRET, tolerance: 60 })
    await assert.rejects(
      () => strict.confirm(notification({ dataId: '1001', ts: String(now - 120) })),
      'x-signature timestamp is outside the 60-second tolerance'
    )
    await assert.rejects(
      () => new MercadoPagoDriver({}).confirm(good),
      'mercadopago has no webhookSecret'
    )
    await assert.rejects(
      () => new MercadoPagoDriver({ webhookSecret: SECRET }).confirm(good),
      'mercadopago has no accessToken to read the notified resource with'
    )
    assert.lengthOf(api.requests, 0)
    assert.throws(
      () => driver.parse(good, 'mercadopago'),
      'Mercado Pago delivery was not confirmed: call confirm(request) before parse'
    )
  })

  test('what the API answers: an error, junk, another resource or no answer', async ({
    assert,
  }) => {
    let answer: { status?: number; body: unknown } = { body: {} }
    const api = await gatewayStandIn(() => answer)
    const driver = new MercadoPagoDriver({
      webhookSecret: SECRET,
      accessToken: TOKEN,
      apiBaseUrl: api.url,
    })
    const read = async () => {
      const request = notification({ dataId: '1001' })
      await driver.confirm(request)
      return driver.parse(request, 'mercadopago')
    }
    const cases: [{ status?: number; body: unknown }, string][] = [
      [{ status: 404, body: {} }, 'Mercado Pago answered 404 for the notified resource'],
      [{ status: 300, body: {} }, 'Mercado Pago answered 300 for the notified resource'],
      [{ body: [] }, 'Mercado Pago answered something other than a JSON object'],
      [
        { body: { id: 1002, status: 'approved' } },
        'Mercado Pago answered with another resource than the notified one',
      ],
    ]
    for (const [reply, message] of cases) {
      answer = reply
      await assert.rejects(read, message)
    }
    answer = { status: 299, body: { id: 1001, status: 'approved', transaction_amount: 1 } }
    const accepted = await read()
    assert.equal(accepted.type, 'payment.succeeded')
    const unreachable = new MercadoPagoDriver({
      webhookSecret: SECRET,
      accessToken: TOKEN,
      apiBaseUrl: 'http://127.0.0.1:9',
    })
    await assert.rejects(
      () => unreachable.confirm(notification({ dataId: '1001' })),
      'Mercado Pago API could not be reached to read the notified resource'
    )
  })
})
