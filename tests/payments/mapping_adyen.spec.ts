import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import { AdyenDriver } from '../../src/payments/drivers/adyen.ts'
import type { WebhookEvent } from '../../src/payments/types.ts'

/**
 * What the Adyen driver maps each notification item to, as docs/payments.md's
 * table says. Items are signed here from Adyen's documented formula (the
 * base64 HMAC-SHA256 of eight fields joined by ':', keyed with the
 * hex-decoded key), never with Atrium's helpers. Database free.
 */

const KEY = '0A1B2C3D4E5F60718293A4B5C6D7E8F9'
const adyen = new AdyenDriver({ hmacKey: KEY })

function signed(notification: Record<string, any>) {
  const fields = [
    notification.pspReference,
    notification.originalReference,
    notification.merchantAccountCode,
    notification.merchantReference,
    notification.amount?.value,
    notification.amount?.currency,
    notification.eventCode,
    notification.success,
  ].map((value) => (value === undefined || value === null ? '' : String(value)))
  const hmacSignature = createHmac('sha256', Buffer.from(KEY, 'hex'))
    .update(fields.join(':'))
    .digest('base64')
  return {
    NotificationRequestItem: {
      ...notification,
      additionalData: { ...notification.additionalData, hmacSignature },
    },
  }
}

function parse(...items: Record<string, any>[]): WebhookEvent<any>[] {
  const body = JSON.stringify({ live: 'false', notificationItems: items.map(signed) })
  return adyen.parse({ rawBody: Buffer.from(body), headers: {}, query: {} }, 'adyen-eu')
}

function item(eventCode: string, extra: Record<string, unknown> = {}) {
  return {
    amount: { currency: 'EUR', value: 300 },
    eventCode,
    eventDate: '2024-06-12T16:45:03+02:00',
    merchantAccountCode: 'Shop',
    merchantReference: 'order-1',
    pspReference: `psp_${eventCode}`,
    originalReference: 'psp_auth',
    success: 'true',
    ...extra,
  }
}

const DISPUTE = {
  disputeId: 'psp_auth:chargeback',
  paymentId: 'psp_auth',
  amount: 300,
  currency: 'EUR',
  reason: null,
  actionableUntil: null,
  externalReference: 'order-1',
}

test.group('Adyen mapping', () => {
  test('an authorisation: the pspReference is the payment, the amount in minor units', ({
    assert,
  }) => {
    const [paid, failed] = parse(
      item('AUTHORISATION', { originalReference: undefined, pspReference: 'psp_1' }),
      item('AUTHORISATION', { originalReference: undefined, pspReference: 'psp_2', success: false })
    )
    assert.deepEqual(
      [paid.id, paid.type, paid.provider, paid.occurredAt],
      [
        'adyen:psp_1:-:AUTHORISATION:true',
        'payment.succeeded',
        'adyen-eu',
        '2024-06-12T14:45:03.000Z',
      ]
    )
    assert.deepEqual(paid.data, {
      paymentId: 'psp_1',
      amount: 300,
      currency: 'EUR',
      status: 'paid',
      externalReference: 'order-1',
    })
    assert.equal((paid.raw as any).pspReference, 'psp_1')
    assert.deepEqual(
      [failed.id, failed.type, failed.data.status],
      ['adyen:psp_2:-:AUTHORISATION:false', 'payment.failed', 'failed']
    )
    // A boolean true counts as success like the string Adyen sends
    const [boolean] = parse(item('AUTHORISATION', { success: true }))
    assert.equal(boolean.type, 'payment.succeeded')
    const [noAmount] = parse(item('AUTHORISATION', { amount: undefined, eventDate: 'soon' }))
    assert.deepEqual(
      [noAmount.data.amount, noAmount.data.currency, noAmount.occurredAt],
      [undefined, undefined, null]
    )
    const [stringAmount] = parse(item('AUTHORISATION', { amount: { value: '1130' } }))
    assert.deepEqual([stringAmount.data.amount, stringAmount.data.currency], [1130, undefined])
  })

  test('a cancellation fails the original payment; a failed one passes through', ({ assert }) => {
    const [canceled, notCanceled] = parse(
      item('CANCELLATION'),
      item('CANCELLATION', { success: 'false' })
    )
    assert.equal(canceled.type, 'payment.failed')
    assert.deepEqual(canceled.data, {
      paymentId: 'psp_auth',
      status: 'failed',
      externalReference: 'order-1',
    })
    assert.equal(notCanceled.type, 'cancellation_failed')
    assert.equal(notCanceled.data.pspReference, 'psp_CANCELLATION')
  })

  test('a refund is one refund of the original payment, keyed by its own pspReference', ({
    assert,
  }) => {
    const [refund, failed, free] = parse(
      item('REFUND'),
      item('REFUND', { success: 'false', pspReference: 'psp_rf2' }),
      item('REFUND', { pspReference: 'psp_rf3', amount: {} })
    )
    assert.deepEqual(
      [refund.id, refund.type],
      ['adyen:psp_REFUND:psp_auth:REFUND:true', 'payment.updated']
    )
    assert.deepEqual(refund.data, {
      paymentId: 'psp_auth',
      externalReference: 'order-1',
      refunds: [{ id: 'psp_REFUND', amount: 300 }],
    })
    assert.deepEqual([failed.type, failed.data.pspReference], ['refund_failed', 'psp_rf2'])
    assert.deepEqual(free.data.refunds, [{ id: 'psp_rf3', amount: 0 }])
  })

  test('chargebacks, notices and closes share the dispute id of the payment', ({ assert }) => {
    const deadline = { additionalData: { defenseDeadline: '2024-07-01T00:00:00Z' } }
    const events = parse(
      item('CHARGEBACK', { reason: 'Fraud', ...deadline }),
      item('NOTIFICATION_OF_CHARGEBACK'),
      item('REQUEST_FOR_INFORMATION'),
      item('NOTIFICATION_OF_FRAUD', {
        additionalData: { defensePeriodEndsAt: '2024-07-02T00:00:00Z' },
      }),
      item('CHARGEBACK_REVERSED'),
      item('PREARBITRATION_WON'),
      item('SECOND_CHARGEBACK'),
      item('PREARBITRATION_LOST')
    )
    assert.deepEqual(
      events.map((event) => [event.type, event.data.outcome]),
      [
        ['payment.disputed', undefined],
        ['payment.dispute_warning', undefined],
        ['payment.dispute_warning', undefined],
        ['payment.dispute_warning', undefined],
        ['payment.dispute_closed', 'won'],
        ['payment.dispute_closed', 'won'],
        ['payment.dispute_closed', 'lost'],
        ['payment.dispute_closed', 'lost'],
      ]
    )
    assert.deepEqual(events[0].data, {
      ...DISPUTE,
      reason: 'Fraud',
      actionableUntil: '2024-07-01T00:00:00.000Z',
    })
    assert.deepEqual(events[1].data, DISPUTE)
    assert.equal(events[3].data.actionableUntil, '2024-07-02T00:00:00.000Z')
    assert.deepEqual(events[4].data, { ...DISPUTE, outcome: 'won' })
  })

  test('other codes pass through lowercased with the item', ({ assert }) => {
    const [capture, report] = parse(item('CAPTURE'), item('REPORT_AVAILABLE'))
    assert.deepEqual([capture.type, report.type], ['capture', 'report_available'])
    assert.equal(report.data.pspReference, 'psp_REPORT_AVAILABLE')
  })

  test('an item without pspReference or eventCode is refused by name', ({ assert }) => {
    assert.throws(() => parse(item('CAPTURE', { pspReference: '' })), /^pspReference is missing$/)
    assert.throws(() => parse(item('', { pspReference: 'p' })), /^eventCode is missing$/)
  })

  test('the hmacKey must be hex bytes; an unset key is refused at parse, not at construction', ({
    assert,
  }) => {
    for (const key of ['ABC', 'XYZ0', ' 0A1B', '0A1B ', 'zz0A1B']) {
      assert.throws(
        () => new AdyenDriver({ hmacKey: key }),
        'Invalid "hmacKey" for adyen in config/payments.ts: expected the hex key from the Customer Area (ADYEN_HMAC_KEY)'
      )
    }
    assert.doesNotThrow(() => new AdyenDriver({ hmacKey: 'abcdef01' }))
    assert.doesNotThrow(() => new AdyenDriver({ hmacKey: '' }))
    assert.doesNotThrow(() => new AdyenDriver({}))
  })

  test('payments:webhook lists the codes to enable: the mapped ones and CAPTURE', ({ assert }) => {
    assert.sameMembers(adyen.subscribedEvents, [
      'AUTHORISATION',
      'CAPTURE',
      'CANCELLATION',
      'REFUND',
      'CHARGEBACK',
      'CHARGEBACK_REVERSED',
      'SECOND_CHARGEBACK',
      'NOTIFICATION_OF_CHARGEBACK',
      'REQUEST_FOR_INFORMATION',
      'NOTIFICATION_OF_FRAUD',
    ])
  })
})
