import { createHmac } from 'node:crypto'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { test } from '@japa/runner'
import { FakeDriver } from '../../src/payments/drivers/fake.ts'
import { InfinitePayDriver } from '../../src/payments/drivers/infinitepay.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { gatewayStandIn } from './stand_ins.ts'

/**
 * InfinitePay: what the payment check asks and accepts, and the event a
 * confirmed delivery becomes; fake: the canonical events it passes through.
 * As docs/payments.md says. Database free (the payment check is a loopback
 * server; fake deliveries are signed here, never with Atrium's helpers).
 */

const DELIVERY = {
  invoice_slug: 'inv-1',
  amount: 1000,
  paid_amount: 1010,
  installments: 1,
  capture_method: 'pix',
  transaction_nsu: 'tx-1',
  order_nsu: 'order-1',
}

const request = (body: unknown): WebhookRequest => ({
  rawBody: Buffer.from(JSON.stringify(body)),
  headers: {},
  query: {},
})

/** A payment check answering `answer` with `status`, and the driver pointed at it */
async function checked(answer: unknown, status = 200, apiPath = '') {
  const api = await gatewayStandIn(() => ({ status, body: answer }))
  const driver = new InfinitePayDriver({ handle: 'shop', apiBaseUrl: `${api.url}${apiPath}` })
  return { api, driver }
}

test.group('InfinitePay', () => {
  test('a delivery InfinitePay confirms as paid is payment.succeeded with the amount it reports', async ({
    assert,
  }) => {
    const { api, driver } = await checked({
      success: true,
      paid: true,
      amount: 1000,
      paid_amount: 1050,
    })
    const delivery = request(DELIVERY)
    await driver.confirm(delivery)
    assert.deepEqual(
      api.requests.map((r) => [r.method, r.url, r.headers['content-type'], r.body]),
      [
        [
          'POST',
          '/invoices/public/checkout/payment_check',
          'application/json',
          { handle: 'shop', order_nsu: 'order-1', transaction_nsu: 'tx-1', slug: 'inv-1' },
        ],
      ]
    )
    const event = driver.parse(delivery, 'infinitepay-br')
    assert.deepEqual(event, {
      id: 'infinitepay:tx-1:paid',
      type: 'payment.succeeded',
      provider: 'infinitepay-br',
      raw: DELIVERY,
      occurredAt: null,
      data: {
        paymentId: 'tx-1',
        amount: 1050,
        currency: 'BRL',
        status: 'paid',
        externalReference: 'order-1',
      },
    })
  })

  test('without paid_amount the answer amount counts; a base URL may end with slashes', async ({
    assert,
  }) => {
    const { api, driver } = await checked({ paid: true, amount: '990' }, 299, '//')
    const delivery = request(DELIVERY)
    await driver.confirm(delivery)
    assert.equal(api.requests[0].url, '/invoices/public/checkout/payment_check')
    assert.equal((driver.parse(delivery, 'i').data as any).amount, 990)
  })

  test('anything but a clear paid answer rejects, by name', async ({ assert }) => {
    const refusals: [answer: unknown, status: number, message: string][] = [
      [{ paid: false, amount: 1000 }, 200, 'InfinitePay does not confirm this transaction as paid'],
      [
        { paid: 'true', amount: 1000 },
        200,
        'InfinitePay does not confirm this transaction as paid',
      ],
      [[{ paid: true }], 200, 'InfinitePay does not confirm this transaction as paid'],
      [{ paid: true, amount: 1000 }, 300, 'InfinitePay payment check answered 300'],
      [{ paid: true, amount: 1000 }, 503, 'InfinitePay payment check answered 503'],
      [{ paid: true, amount: 10.5 }, 200, 'amount 10.5 is not an integer in minor units'],
    ]
    for (const [answer, status, message] of refusals) {
      const { driver } = await checked(answer, status)
      const delivery = request(DELIVERY)
      await assert.rejects(() => driver.confirm(delivery), message)
      assert.throws(
        () => driver.parse(delivery, 'i'),
        'InfinitePay delivery was not confirmed: call confirm(request) before parse'
      )
    }
    const down = new InfinitePayDriver({ handle: 'shop', apiBaseUrl: 'http://127.0.0.1:1' })
    await assert.rejects(
      () => down.confirm(request(DELIVERY)),
      'InfinitePay payment check could not be reached'
    )
  })

  test('a delivery missing what the check needs is refused before any request', async ({
    assert,
  }) => {
    const { api, driver } = await checked({ paid: true, amount: 1 })
    for (const field of ['order_nsu', 'transaction_nsu', 'invoice_slug']) {
      const delivery: Record<string, unknown> = { ...DELIVERY }
      delete delivery[field]
      await assert.rejects(() => driver.confirm(request(delivery)), `${field} is missing`)
    }
    await assert.rejects(
      () => new InfinitePayDriver({ apiBaseUrl: api.url }).confirm(request(DELIVERY)),
      'infinitepay has no handle to check payments with'
    )
    assert.lengthOf(api.requests, 0)
  })

  test('a check slower than timeoutMs rejects as unreachable', async ({ assert }) => {
    // A port that accepts connections and never answers
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as AddressInfo
    try {
      const driver = new InfinitePayDriver({
        handle: 'shop',
        apiBaseUrl: `http://127.0.0.1:${port}`,
        timeoutMs: 50,
      })
      await assert.rejects(
        () => driver.confirm(request(DELIVERY)),
        'InfinitePay payment check could not be reached'
      )
    } finally {
      silent.close()
    }
  })

  test('payments:webhook names the checkout notification', ({ assert }) => {
    assert.deepEqual(new InfinitePayDriver().subscribedEvents, ['checkout payment approved'])
  })
})

const fake = new FakeDriver({ secret: 'fake-secret' })

function fakeParse(body: string) {
  const signature = createHmac('sha256', 'fake-secret').update(body).digest('hex')
  return fake.parse(
    { rawBody: Buffer.from(body), headers: { 'x-fake-signature': signature }, query: {} },
    'fake-1'
  )
}

test.group('fake', () => {
  test('one event or an array of them, passed through in canonical form', ({ assert }) => {
    const event = {
      id: 'evt_1',
      type: 'payment.succeeded',
      data: { paymentId: 'p1', amount: 100 },
      occurredAt: '2024-06-12T16:45:03.000Z',
    }
    assert.deepEqual(fakeParse(JSON.stringify(event)), {
      ...event,
      raw: event,
      provider: 'fake-1',
    })
    const bare = { id: 'evt_2', type: 'custom_thing', data: [1] }
    assert.deepEqual(fakeParse(JSON.stringify([event, bare])), [
      { ...event, raw: event, provider: 'fake-1' },
      {
        id: 'evt_2',
        type: 'custom_thing',
        data: {},
        raw: bare,
        provider: 'fake-1',
        occurredAt: null,
      },
    ])
    assert.deepEqual(fakeParse('[]'), [])
  })

  test('malformed deliveries are refused by name', ({ assert }) => {
    assert.throws(() => fakeParse('{"id":'), /^body is not valid JSON$/)
    assert.throws(() => fakeParse('5'), /^body is not a JSON object$/)
    assert.throws(() => fakeParse('[5]'), /^fake event is not an object$/)
    assert.throws(() => fakeParse('[null]'), /^fake event is not an object$/)
    assert.throws(() => fakeParse('{"type":"payment.failed"}'), /^event id is missing$/)
    assert.throws(() => fakeParse('[{"id":"e"}]'), /^event type is missing$/)
  })

  test('payments:webhook lists all ten canonical types', ({ assert }) => {
    assert.sameMembers(fake.subscribedEvents, [
      'payment.succeeded',
      'payment.failed',
      'payment.refunded',
      'payment.updated',
      'payment.dispute_warning',
      'payment.disputed',
      'payment.dispute_closed',
      'subscription.created',
      'subscription.updated',
      'subscription.canceled',
    ])
  })
})
