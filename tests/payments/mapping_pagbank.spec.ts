import { createHash, createSign, generateKeyPairSync } from 'node:crypto'
import { test } from '@japa/runner'
import { getGlobalDispatcher, MockAgent, setGlobalDispatcher } from 'undici'
import { PagBankDriver, readPagBankKey } from '../../src/payments/drivers/pagbank.ts'
import type { WebhookEvent, WebhookRequest } from '../../src/payments/types.ts'
import { gatewayStandIn } from './stand_ins.ts'

/**
 * What the PagBank driver maps an order to (one event per charge), and how
 * it fetches the public key for `x-payload-signature`, as docs/payments.md
 * says. Deliveries are signed here from PagBank's documented formulas, never
 * with Atrium's helpers. Database free (the key endpoint is a loopback server).
 */

const pagbank = new PagBankDriver({ webhookToken: 'tok' })

/** `x-authenticity-token`: the SHA-256 hex of "<token>-<raw body>" */
function parse(order: Record<string, unknown>): WebhookEvent<any>[] {
  const raw = JSON.stringify(order)
  const token = createHash('sha256').update(`tok-${raw}`).digest('hex')
  return pagbank.parse(
    { rawBody: Buffer.from(raw), headers: { 'x-authenticity-token': token }, query: {} },
    'pagbank-br'
  )
}

function charge(id: string, status: string, value = 9990, refunded?: number) {
  return {
    id,
    status,
    created_at: '2024-06-12T16:40:00.000-03:00',
    amount: { value, currency: 'BRL', summary: { total: value, paid: value, refunded } },
  }
}

const ORDER = { id: 'ORDE_1', reference_id: 'order-1', customer: { tax_id: '12345678909' } }
const COMMON = {
  paymentId: 'CHAR_1',
  amount: 9990,
  currency: 'BRL',
  externalReference: 'order-1',
  customerId: '12345678909',
}

test.group('PagBank mapping', () => {
  test('a paid charge is a payment keyed by order, charge and status', ({ assert }) => {
    const paid = { ...charge('CHAR_1', 'paid'), paid_at: '2024-06-12T16:45:03.000-03:00' }
    const [event] = parse({ ...ORDER, charges: [paid] })
    assert.deepEqual(
      [event.id, event.type, event.provider, event.occurredAt],
      ['pagbank:ORDE_1:CHAR_1:PAID', 'payment.succeeded', 'pagbank-br', '2024-06-12T19:45:03.000Z']
    )
    assert.deepEqual(event.data, { ...COMMON, status: 'paid', paidAt: '2024-06-12T19:45:03.000Z' })
    assert.equal((event.raw as any).id, 'CHAR_1')
  })

  test('each status of the table, one event per charge', ({ assert }) => {
    const statuses = [
      'DECLINED',
      'CANCELED',
      'AUTHORIZED',
      'WAITING',
      'IN_ANALYSIS',
      'Paid',
      'REVERSED',
    ]
    const events = parse({
      ...ORDER,
      charges: [...statuses.map((status, index) => charge(`CHAR_${index}`, status)), 'x'],
    })
    assert.deepEqual(
      events.map((event) => [event.id, event.type, event.data.status, event.occurredAt]),
      [
        ['pagbank:ORDE_1:CHAR_0:DECLINED', 'payment.failed', 'failed', '2024-06-12T19:40:00.000Z'],
        ['pagbank:ORDE_1:CHAR_1:CANCELED', 'payment.failed', 'failed', '2024-06-12T19:40:00.000Z'],
        [
          'pagbank:ORDE_1:CHAR_2:AUTHORIZED',
          'payment.updated',
          'pending',
          '2024-06-12T19:40:00.000Z',
        ],
        ['pagbank:ORDE_1:CHAR_3:WAITING', 'payment.updated', 'pending', '2024-06-12T19:40:00.000Z'],
        [
          'pagbank:ORDE_1:CHAR_4:IN_ANALYSIS',
          'payment.updated',
          'pending',
          '2024-06-12T19:40:00.000Z',
        ],
        ['pagbank:ORDE_1:CHAR_5:PAID', 'payment.succeeded', 'paid', '2024-06-12T19:40:00.000Z'],
        ['pagbank:ORDE_1:CHAR_6:REVERSED', 'reversed', undefined, '2024-06-12T19:40:00.000Z'],
      ]
    )
    assert.deepEqual(events[0].data, { ...COMMON, paymentId: 'CHAR_0', status: 'failed' })
    assert.deepEqual(events[6].data, { ...COMMON, paymentId: 'CHAR_6' })
    assert.isNull(events[5].data.paidAt)
  })

  test('a refunded sum makes the charge payment.updated while partial, payment.refunded when whole', ({
    assert,
  }) => {
    const [partial, whole, over] = parse({
      ...ORDER,
      charges: [
        charge('CHAR_1', 'PAID', 9990, 200),
        charge('CHAR_2', 'CANCELED', 500, 500),
        charge('CHAR_3', 'PAID', 500, 600),
      ],
    })
    assert.deepEqual(
      [partial.id, partial.type, partial.data],
      [
        'pagbank:ORDE_1:CHAR_1:PAID:r200',
        'payment.updated',
        { ...COMMON, refundedAmount: 200, refunds: [{ id: 'CHAR_1:cumulative', amount: 200 }] },
      ]
    )
    assert.deepEqual(
      [whole.id, whole.type, whole.data],
      [
        'pagbank:ORDE_1:CHAR_2:CANCELED:r500',
        'payment.refunded',
        {
          ...COMMON,
          paymentId: 'CHAR_2',
          amount: 500,
          refundedAmount: 500,
          refunds: [{ id: 'CHAR_2:cumulative', amount: 500 }],
        },
      ]
    )
    assert.equal(over.type, 'payment.refunded')
    const [zero] = parse({ ...ORDER, charges: [charge('CHAR_1', 'PAID', 9990, 0)] })
    assert.deepEqual([zero.id, zero.type], ['pagbank:ORDE_1:CHAR_1:PAID', 'payment.succeeded'])
  })

  test("the reference is the charge's, else the order's; the currency defaults to BRL", ({
    assert,
  }) => {
    const [own, bare] = parse({
      id: 'ORDE_2',
      reference_id: 'order-2',
      charges: [
        { ...charge('CHAR_1', 'PAID'), reference_id: 'charge-ref' },
        { id: 'CHAR_2', status: 'PAID', amount: { value: '100' } },
      ],
    })
    assert.deepEqual([own.data.externalReference, own.data.customerId], ['charge-ref', null])
    assert.deepEqual(
      [bare.data.externalReference, bare.data.amount, bare.data.currency, bare.occurredAt],
      ['order-2', 100, 'BRL', null]
    )
  })

  test('an order without charges, ids or a whole amount is refused by name', ({ assert }) => {
    for (const charges of [undefined, [], ['x'], { id: 'CHAR_1' }]) {
      assert.throws(() => parse({ ...ORDER, charges }), /^PagBank order carries no charges$/)
    }
    assert.throws(() => parse({ charges: [charge('C', 'PAID')] }), /^order id is missing$/)
    assert.throws(
      () => parse({ ...ORDER, charges: [{ status: 'PAID' }] }),
      /^charge id is missing$/
    )
    assert.throws(() => parse({ ...ORDER, charges: [{ id: 'C' }] }), /^charge status is missing$/)
    assert.throws(
      () => parse({ ...ORDER, charges: [{ id: 'C', status: 'PAID', amount: { value: 1.5 } }] }),
      /^amount 1.5 is not an integer in minor units$/
    )
  })

  test('payments:webhook lists order notifications', ({ assert }) => {
    assert.deepEqual(pagbank.subscribedEvents, ['order notifications (notification_urls)'])
  })
})

/** An EC P-256 key pair, the public key as base64 DER and PEM */
function ecKeys() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  return {
    der: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (body: string): WebhookRequest => ({
      rawBody: Buffer.from(body),
      headers: {
        'x-payload-signature': createSign('sha256')
          .update(body)
          .sign({ key: privateKey, dsaEncoding: 'der' }, 'base64'),
      },
      query: {},
    }),
  }
}

const BODY = JSON.stringify({ ...ORDER, charges: [charge('CHAR_1', 'PAID')] })

test.group('PagBank public key fetch', () => {
  test('the key is fetched once with the API token, in each documented answer shape', async ({
    assert,
  }) => {
    const keys = ecKeys()
    const other = ecKeys()
    const answers = [
      { public_key: keys.der },
      { public_keys: [{ is_current: false, public_key: other.der }, { public_key: keys.der }] },
      { public_keys: ['x', { is_current: false, key: keys.der }] },
      { public_keys: [{ key: keys.pem, is_current: true }] },
    ]
    for (const answer of answers) {
      const api = await gatewayStandIn(() => ({ body: answer }))
      const driver = new PagBankDriver({ token: 'api-token', publicKeysUrl: `${api.url}/keys` })
      const request = keys.sign(BODY)
      await driver.confirm(request)
      await driver.confirm(keys.sign(BODY))
      assert.equal(
        (driver.parse(request, 'p')[0].data as any).paymentId,
        'CHAR_1',
        JSON.stringify(answer)
      )
      assert.deepEqual(
        api.requests.map((r) => [r.method, r.url, r.headers.authorization, r.headers.accept]),
        [['GET', '/keys', 'Bearer api-token', 'application/json']]
      )
    }
  })

  test('no request without a signature header or with a configured key; none without a token', async ({
    assert,
  }) => {
    const keys = ecKeys()
    const api = await gatewayStandIn(() => ({ body: { public_key: keys.der } }))
    const configured = new PagBankDriver({ publicKey: keys.pem, publicKeysUrl: api.url })
    await configured.confirm(keys.sign(BODY))
    const unsigned = new PagBankDriver({ webhookToken: 'tok', publicKeysUrl: api.url })
    await unsigned.confirm({ rawBody: Buffer.from(BODY), headers: {}, query: {} })
    assert.lengthOf(api.requests, 0)
    await unsigned.confirm(keys.sign(BODY))
    assert.deepEqual(
      api.requests.map((r) => r.headers.authorization),
      [undefined]
    )
  })

  test('a TTL of 0 fetches again; a failed refresh keeps the expired key', async ({ assert }) => {
    const keys = ecKeys()
    let up = true
    const api = await gatewayStandIn(() =>
      up ? { body: { public_key: keys.der } } : { status: 503, body: {} }
    )
    const driver = new PagBankDriver({ publicKeysUrl: api.url, publicKeyTtlMs: 0 })
    await driver.confirm(keys.sign(BODY))
    await driver.confirm(keys.sign(BODY))
    assert.lengthOf(api.requests, 2)
    up = false
    const request = keys.sign(BODY)
    await driver.confirm(request)
    await driver.confirm(request)
    assert.lengthOf(api.requests, 3, 'a failure is not retried at once')
    assert.equal((driver.parse(request, 'p')[0].data as any).paymentId, 'CHAR_1')
  })

  test('a failed fetch rejects with its reason, and the same reason without asking again', async ({
    assert,
  }) => {
    const keys = ecKeys()
    const cases: [answer: { status?: number; body: unknown }, message: string][] = [
      [{ status: 503, body: { public_key: keys.der } }, 'PagBank public-keys answered 503'],
      [{ body: { public_keys: [] } }, 'PagBank public-keys answered without a key'],
      [{ body: { public_key: 5 } }, 'PagBank public-keys answered without a key'],
      [{ body: [keys.der] }, 'PagBank public-keys answered without a key'],
      [{ body: null }, 'PagBank public-keys answered without a key'],
    ]
    for (const [answer, message] of cases) {
      const api = await gatewayStandIn(() => answer)
      const driver = new PagBankDriver({ publicKeysUrl: api.url })
      await assert.rejects(() => driver.confirm(keys.sign(BODY)), message)
      await assert.rejects(() => driver.confirm(keys.sign(BODY)), message)
      assert.lengthOf(api.requests, 1, message)
    }
    const closed = new PagBankDriver({ publicKeysUrl: 'http://127.0.0.1:1/keys' })
    await assert.rejects(
      () => closed.confirm(keys.sign(BODY)),
      'PagBank public key could not be fetched to check x-payload-signature'
    )
  })

  test('after a failure PagBank is asked again only once 30 seconds have passed', async ({
    assert,
  }) => {
    const keys = ecKeys()
    const api = await gatewayStandIn(() => ({ status: 503, body: {} }))
    const driver = new PagBankDriver({ publicKeysUrl: api.url })
    const realNow = Date.now
    const start = realNow()
    let now = start
    // The driver reads the clock through Date.now: a controlled clock, no waiting
    Date.now = () => now
    try {
      await assert.rejects(
        () => driver.confirm(keys.sign(BODY)),
        'PagBank public-keys answered 503'
      )
      now = start + 29_999
      await assert.rejects(
        () => driver.confirm(keys.sign(BODY)),
        'PagBank public-keys answered 503'
      )
      assert.lengthOf(api.requests, 1)
      now = start + 30_000
      await assert.rejects(
        () => driver.confirm(keys.sign(BODY)),
        'PagBank public-keys answered 503'
      )
      assert.lengthOf(api.requests, 2)
    } finally {
      Date.now = realNow
    }
  })

  test("without publicKeysUrl the key comes from PagBank's documented endpoint", async ({
    assert,
  }) => {
    const keys = ecKeys()
    // fetch goes through undici's global dispatcher: answer PagBank's host without a network
    const previous = getGlobalDispatcher()
    const pagbankApi = new MockAgent()
    pagbankApi.disableNetConnect()
    pagbankApi
      .get('https://api.pagseguro.com')
      .intercept({ path: '/public-keys', method: 'GET' })
      .reply(200, { public_key: keys.der })
    setGlobalDispatcher(pagbankApi)
    try {
      const driver = new PagBankDriver({ token: 'api-token' })
      const request = keys.sign(BODY)
      await driver.confirm(request)
      assert.equal((driver.parse(request, 'p')[0].data as any).paymentId, 'CHAR_1')
      pagbankApi.assertNoPendingInterceptors()
    } finally {
      setGlobalDispatcher(previous)
      await pagbankApi.close()
    }
  })

  test('concurrent signed deliveries share one request', async ({ assert }) => {
    const keys = ecKeys()
    const api = await gatewayStandIn(() => ({ body: { public_key: keys.der } }))
    const driver = new PagBankDriver({ publicKeysUrl: api.url })
    await Promise.all([driver.confirm(keys.sign(BODY)), driver.confirm(keys.sign(BODY))])
    assert.lengthOf(api.requests, 1)
  })

  test('readPagBankKey reads PEM and base64 DER', ({ assert }) => {
    const keys = ecKeys()
    assert.equal(readPagBankKey(keys.pem).asymmetricKeyType, 'ec')
    assert.equal(readPagBankKey(keys.der).export({ type: 'spki', format: 'pem' }), keys.pem)
  })
})
