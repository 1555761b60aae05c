import { test } from '@japa/runner'
import { EfiDriver, isEfiTxid } from '../../src/payments/drivers/efi.ts'
import type { WebhookEvent } from '../../src/payments/types.ts'

/**
 * What the Efí driver maps a `pix[]` batch to, as docs/payments.md's table
 * says: one payment per Pix, one event per devolução. Database free.
 */

const efi = new EfiDriver({ webhookHmac: 'efi-hmac' })

function parse(body: unknown): WebhookEvent<any>[] {
  return efi.parse(
    { rawBody: Buffer.from(JSON.stringify(body)), headers: {}, query: { hmac: 'efi-hmac' } },
    'efi-pix'
  )
}

const TXID = 'order1234567890abcdefghijKLMN'

test.group('Efí mapping', () => {
  test('a Pix without devolucoes is a payment of its txid, in cents', ({ assert }) => {
    const [event] = parse({
      pix: [{ endToEndId: 'E1', txid: TXID, valor: '110.50', horario: '2024-06-12T16:45:03.000Z' }],
    })
    assert.deepEqual(
      [event.id, event.type, event.provider, event.occurredAt],
      [`efi:E1:${TXID}:paid`, 'payment.succeeded', 'efi-pix', '2024-06-12T16:45:03.000Z']
    )
    assert.deepEqual(event.data, {
      paymentId: TXID,
      amount: 11050,
      currency: 'BRL',
      externalReference: TXID,
      status: 'paid',
      paidAt: '2024-06-12T16:45:03.000Z',
    })
    assert.equal((event.raw as any).endToEndId, 'E1')
  })

  test('a txid Efí generated (not 26 to 35 alphanumerics) is no reference; the endToEndId keys the payment', ({
    assert,
  }) => {
    const events = parse({
      pix: [
        { endToEndId: 'E2', txid: 'short', valor: '1.00' },
        { endToEndId: 'E3', valor: 2 },
        { endToEndId: 'E4', txid: 'a'.repeat(26), valor: '0.01', devolucoes: [] },
      ],
    })
    assert.deepEqual(
      events.map((event) => [
        event.id,
        event.data.paymentId,
        event.data.externalReference,
        event.data.amount,
      ]),
      [
        ['efi:E2:-:paid', 'E2', null, 100],
        ['efi:E3:-:paid', 'E3', null, 200],
        [`efi:E4:${'a'.repeat(26)}:paid`, 'a'.repeat(26), 'a'.repeat(26), 1],
      ]
    )
    assert.deepEqual([events[1].occurredAt, events[1].data.paidAt], [null, null])
  })

  test('isEfiTxid: 26 to 35 letters and digits, nothing else', ({ assert }) => {
    for (const txid of ['a'.repeat(26), 'Z9'.repeat(17) + 'x', TXID]) {
      assert.isTrue(isEfiTxid(txid), txid)
    }
    for (const value of [
      'a'.repeat(25),
      'a'.repeat(36),
      `${'a'.repeat(26)}-`,
      `-${'a'.repeat(26)}`,
      ['a'.repeat(26)],
      `${'a'.repeat(13)} ${'a'.repeat(13)}`,
      12345678901234567890123456789,
      null,
    ]) {
      assert.isFalse(isEfiTxid(value), String(value))
    }
  })

  test('each devolução is its own event: DEVOLVIDO a refund, other statuses passed through', ({
    assert,
  }) => {
    const events = parse({
      pix: [
        {
          endToEndId: 'E9',
          txid: TXID,
          valor: '50.00',
          devolucoes: [
            {
              id: 'D1',
              rtrId: 'R1',
              valor: '10.00',
              status: 'DEVOLVIDO',
              horario: { solicitacao: '2024-06-13T10:00:00Z', liquidacao: '2024-06-13T10:05:00Z' },
            },
            {
              rtrId: 'R2',
              valor: '5.00',
              status: 'EM_PROCESSAMENTO',
              horario: { solicitacao: '2024-06-14T10:00:00Z' },
            },
            'not a devolucao',
            { id: 'D3', valor: 1 },
          ],
        },
      ],
    })
    assert.deepEqual(
      events.map((event) => [event.id, event.type, event.occurredAt]),
      [
        ['efi:E9:D1:DEVOLVIDO', 'payment.updated', '2024-06-13T10:05:00.000Z'],
        ['efi:E9:R2:EM_PROCESSAMENTO', 'devolucao_em_processamento', '2024-06-14T10:00:00.000Z'],
        ['efi:E9:D3:DEVOLVIDO', 'payment.updated', null],
      ]
    )
    assert.deepEqual(events[0].data, {
      paymentId: TXID,
      amount: 5000,
      currency: 'BRL',
      externalReference: TXID,
      refunds: [{ id: 'D1', amount: 1000 }],
    })
    assert.deepEqual(events[1].data.refunds, [{ id: 'R2', amount: 500 }])
    assert.deepEqual(events[2].data.refunds, [{ id: 'D3', amount: 100 }])
    assert.equal((events[1].raw as any).endToEndId, 'E9')
  })

  test('a batch maps every Pix in order', ({ assert }) => {
    const events = parse({
      pix: [
        { endToEndId: 'A', valor: '1.00' },
        { endToEndId: 'B', valor: '2.00', devolucoes: [{ id: 'D', valor: '2.00' }] },
      ],
    })
    assert.deepEqual(
      events.map((event) => event.id),
      ['efi:A:-:paid', 'efi:B:D:DEVOLVIDO']
    )
  })

  test('malformed batches are refused by name', ({ assert }) => {
    for (const body of [{}, { pix: [] }, { pix: { endToEndId: 'E' } }]) {
      assert.throws(() => parse(body), /^Efí delivery has no pix\[\]$/)
    }
    assert.throws(
      () => parse({ pix: [{ endToEndId: 'E', valor: '1.00' }, 'x'] }),
      /^pix\[1\] is not an object$/
    )
    assert.throws(
      () => parse({ pix: [{ endToEndId: 'E', valor: '1.00' }, { valor: '1.00' }] }),
      /^pix\[1\]\.endToEndId is missing$/
    )
    assert.throws(
      () => parse({ pix: [{ endToEndId: 'E', valor: '1.00', devolucoes: [{ valor: '1.00' }] }] }),
      /^devolucao id is missing$/
    )
    // Reais have two decimals: a third one is refused, never rounded
    assert.throws(
      () => parse({ pix: [{ endToEndId: 'E', valor: '1.005' }] }),
      /^amount 1.005 has more decimals than BRL allows$/
    )
    assert.throws(
      () =>
        parse({ pix: [{ endToEndId: 'E', valor: '2', devolucoes: [{ id: 'D', valor: 0.001 }] }] }),
      /^amount 0.001 has more decimals than BRL allows$/
    )
  })

  test('payments:webhook lists the pix notification', ({ assert }) => {
    assert.deepEqual(efi.subscribedEvents, ['pix'])
  })
})
