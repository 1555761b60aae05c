import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { WooviDriver } from '../../src/payments/drivers/woovi.ts'
import type { WebhookEvent } from '../../src/payments/types.ts'

/**
 * What the Woovi driver maps a verified delivery to, as docs/payments.md's
 * table says. Deliveries are signed here with the HMAC-SHA1 Woovi documents
 * for its per-webhook secret (the RSA path is driver_verification.spec.ts's),
 * never with Atrium's helpers. Database free.
 */

const woovi = new WooviDriver({ webhookSecret: 'woovi-secret' })

function parse(body: Record<string, unknown>): WebhookEvent<any> {
  const raw = JSON.stringify(body)
  const signature = createHmac('sha1', 'woovi-secret').update(raw).digest('base64')
  return woovi.parse(
    { rawBody: Buffer.from(raw), headers: { 'x-openpix-signature': signature }, query: {} },
    'woovi-br'
  )
}

const CHARGE = {
  identifier: 'chg_1',
  globalID: 'Q2hhcmdl',
  correlationID: 'order-1',
  value: 1500,
  status: 'COMPLETED',
  paidAt: '2024-06-12T16:45:03.000Z',
  updatedAt: '2024-06-12T16:46:00.000Z',
}
const PIX = { endToEndId: 'E1', value: 1400, time: '2024-06-12T16:45:10.000Z' }
const COMMON = { paymentId: 'chg_1', amount: 1500, currency: 'BRL', externalReference: 'order-1' }

test.group('Woovi mapping', () => {
  test('a completed charge or received transaction is a payment keyed by charge, endToEndId and status', ({
    assert,
  }) => {
    for (const name of ['OPENPIX:CHARGE_COMPLETED', 'OPENPIX:TRANSACTION_RECEIVED']) {
      const event = parse({ event: name, charge: CHARGE, pix: PIX })
      assert.deepEqual(
        [event.id, event.type, event.provider, event.occurredAt],
        ['woovi:chg_1:E1:COMPLETED', 'payment.succeeded', 'woovi-br', PIX.time],
        name
      )
      assert.deepEqual(event.data, { ...COMMON, status: 'paid', paidAt: CHARGE.paidAt })
      assert.equal((event.raw as any).event, name)
    }
    // Without a Pix: no endToEndId, the charge's update time, its value
    const chargeOnly = parse({
      event: 'OPENPIX:CHARGE_COMPLETED',
      charge: { ...CHARGE, paidAt: undefined },
    })
    assert.deepEqual(
      [chargeOnly.id, chargeOnly.occurredAt, chargeOnly.data.paidAt],
      ['woovi:chg_1:-:COMPLETED', CHARGE.updatedAt, null]
    )
    // Without a charge: the Pix's transaction, value and time; the status is unknown
    const pixOnly = parse({
      evento: 'OPENPIX:TRANSACTION_RECEIVED',
      pix: { ...PIX, transactionID: 'tx_1' },
    })
    assert.deepEqual(
      [pixOnly.id, pixOnly.data],
      [
        'woovi:tx_1:E1:UNKNOWN',
        {
          paymentId: 'tx_1',
          amount: 1400,
          currency: 'BRL',
          externalReference: null,
          status: 'paid',
          paidAt: PIX.time,
        },
      ]
    )
  })

  test('the charge id is its identifier, else its globalID, else its correlationID', ({
    assert,
  }) => {
    const id = (charge: Record<string, unknown>) =>
      parse({ event: 'OPENPIX:CHARGE_EXPIRED', charge: { value: 1, ...charge } }).data.paymentId
    assert.equal(id({ globalID: 'G', correlationID: 'C' }), 'G')
    assert.equal(id({ correlationID: 'C' }), 'C')
    assert.throws(
      () => parse({ event: 'OPENPIX:CHARGE_EXPIRED', charge: { value: 1 }, pix: { value: 1 } }),
      /^charge id is missing$/
    )
    assert.throws(
      () => parse({ event: 'OPENPIX:CHARGE_EXPIRED', charge: { value: 1 } }),
      /^charge id is missing$/
    )
    assert.throws(
      () => parse({ event: 'OPENPIX:CHARGE_EXPIRED', charge: { identifier: 'c' } }),
      /^amount undefined is not an integer in minor units$/
    )
  })

  test('an expired charge fails the payment', ({ assert }) => {
    const event = parse({
      event: 'OPENPIX:CHARGE_EXPIRED',
      charge: { ...CHARGE, status: 'EXPIRED' },
    })
    assert.deepEqual(
      [event.id, event.type, event.data],
      ['woovi:chg_1:-:EXPIRED', 'payment.failed', { ...COMMON, status: 'failed' }]
    )
  })

  test('a refund is keyed by its own id, from the delivery, the Pix, or the Pix itself', ({
    assert,
  }) => {
    const name = 'OPENPIX:TRANSACTION_REFUND_RECEIVED'
    const top = parse({
      event: name,
      charge: CHARGE,
      pix: PIX,
      refund: { refundId: 'rf_1', value: 300 },
    })
    assert.deepEqual(
      [top.id, top.type, top.data],
      [
        'woovi:chg_1:rf_1:REFUNDED',
        'payment.updated',
        { ...COMMON, refunds: [{ id: 'rf_1', amount: 300 }] },
      ]
    )
    const nested = parse({
      event: name,
      charge: CHARGE,
      pix: { ...PIX, refund: { endToEndId: 'D2', value: 200 } },
    })
    assert.deepEqual(nested.data.refunds, [{ id: 'D2', amount: 200 }])
    const pixAsRefund = parse({
      event: name,
      charge: CHARGE,
      pix: { correlationID: 'rf-3', value: 100 },
    })
    assert.deepEqual(
      [pixAsRefund.id, pixAsRefund.data.refunds],
      ['woovi:chg_1:rf-3:REFUNDED', [{ id: 'rf-3', amount: 100 }]]
    )
    assert.throws(
      () => parse({ event: name, charge: CHARGE, refund: 'rf' }),
      /^refund id is missing$/
    )
  })

  test('the registration test and other events pass through; a delivery without a name is refused', ({
    assert,
  }) => {
    const registration = { evento: 'teste_webhook', data_criacao: '2024-06-12' }
    const ping = parse(registration)
    assert.deepEqual(
      [ping.id, ping.type, ping.data, ping.occurredAt],
      ['woovi:teste_webhook', 'teste_webhook', registration, null]
    )
    const other = parse({
      event: 'OPENPIX:CHARGE_CREATED',
      charge: { ...CHARGE, status: 'ACTIVE' },
    })
    assert.deepEqual(
      [other.id, other.type, other.data],
      ['woovi:chg_1:OPENPIX:CHARGE_CREATED:ACTIVE', 'openpix:charge_created', COMMON]
    )
    const pixOnly = parse({
      event: 'OPENPIX:CHARGE_CREATED',
      charge: 'x',
      pix: { transactionID: 't', value: 5 },
    })
    assert.equal(pixOnly.id, 'woovi:t:OPENPIX:CHARGE_CREATED:UNKNOWN')
    for (const body of [{}, { event: '' }, { evento: null }]) {
      assert.throws(() => parse({ ...body, charge: CHARGE }), /^Woovi delivery names no event$/)
    }
    assert.equal(
      parse({ event: 'OPENPIX:CHARGE_EXPIRED', evento: 'x', charge: CHARGE }).type,
      'payment.failed'
    )
  })

  test('payments:webhook lists the events to enable', ({ assert }) => {
    assert.sameMembers(woovi.subscribedEvents, [
      'OPENPIX:CHARGE_COMPLETED',
      'OPENPIX:CHARGE_EXPIRED',
      'OPENPIX:TRANSACTION_REFUND_RECEIVED',
    ])
  })
})
