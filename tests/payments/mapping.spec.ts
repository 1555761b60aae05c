import { test } from '@japa/runner'
import { signedWebhook } from '../../src/payments/testing.ts'
import { toMinorUnits } from '../../src/payments/money.ts'
import { gateways } from '../../src/payments/main.ts'
import { onDiagnostic, publishDiagnostic } from '../../src/shared/diagnostics.ts'
import type { PaymentDriver, WebhookEvent } from '../../src/payments/types.ts'
import { CREDENTIALS, WOOVI_PUBLIC_KEY } from './helpers.ts'

async function parse(name: string, payload: unknown): Promise<WebhookEvent<any>[]> {
  const factory = {
    stripe: gateways.stripe({ webhookSecret: CREDENTIALS.stripe.webhookSecret }),
    asaas: gateways.asaas(CREDENTIALS.asaas),
    woovi: gateways.woovi({ webhookPublicKey: WOOVI_PUBLIC_KEY }),
    pagbank: gateways.pagbank(CREDENTIALS.pagbank),
    adyen: gateways.adyen(CREDENTIALS.adyen),
    efi: gateways.efi(),
  }[name]!
  const driver: PaymentDriver = await factory.resolver()
  const signed = signedWebhook(name, payload, (CREDENTIALS as any)[name])
  const parsed = driver.parse(
    { rawBody: Buffer.from(signed.body), headers: signed.headers, query: signed.query ?? {} },
    name
  )
  return Array.isArray(parsed) ? parsed : [parsed]
}

const stripeEvent = (type: string, object: Record<string, unknown>) => ({
  id: `evt_${type}`,
  object: 'event',
  type,
  created: 1_700_000_000,
  data: { object },
})

test.group('Gateway mapping', () => {
  test('stripe: a paid checkout.session.completed is payment.succeeded of its payment intent; an unpaid one passes through', async ({
    assert,
  }) => {
    const session = {
      id: 'cs_1',
      object: 'checkout.session',
      payment_intent: 'pi_cs_1',
      payment_status: 'paid',
      amount_total: 4990,
      currency: 'brl',
      customer: 'cus_9',
      client_reference_id: 'order-77',
    }
    const [paid] = await parse('stripe', stripeEvent('checkout.session.completed', session))
    assert.equal(paid.type, 'payment.succeeded')
    assert.deepEqual(paid.data, {
      paymentId: 'pi_cs_1',
      amount: 4990,
      currency: 'BRL',
      status: 'paid',
      customerId: 'cus_9',
      externalReference: 'order-77',
    })
    const [unpaid] = await parse(
      'stripe',
      stripeEvent('checkout.session.completed', { ...session, payment_status: 'unpaid' })
    )
    assert.equal(unpaid.type, 'checkout.session.completed')
  })

  test('stripe: charge.refunded is payment.updated while partial and payment.refunded when whole', async ({
    assert,
  }) => {
    const charge = { id: 'ch_1', payment_intent: 'pi_1', amount: 1000, currency: 'usd' }
    const [partial] = await parse(
      'stripe',
      stripeEvent('charge.refunded', { ...charge, amount_refunded: 400 })
    )
    assert.equal(partial.type, 'payment.updated')
    assert.deepEqual(partial.data.refunds, [{ id: 'pi_1:cumulative', amount: 400 }])
    const [whole] = await parse(
      'stripe',
      stripeEvent('charge.refunded', { ...charge, amount_refunded: 1000, refunded: true })
    )
    assert.equal(whole.type, 'payment.refunded')
  })

  test('stripe: fraud warnings and inquiries are payment.dispute_warning, chargebacks payment.disputed', async ({
    assert,
  }) => {
    const [warning] = await parse(
      'stripe',
      stripeEvent('radar.early_fraud_warning.created', {
        id: 'issfr_1',
        charge: 'ch_1',
        fraud_type: 'misc',
      })
    )
    assert.equal(warning.type, 'payment.dispute_warning')
    const dispute = {
      id: 'dp_1',
      charge: 'ch_1',
      amount: 500,
      currency: 'usd',
      reason: 'fraudulent',
      evidence_details: { due_by: 1_900_000_000 },
    }
    const [inquiry] = await parse(
      'stripe',
      stripeEvent('charge.dispute.created', { ...dispute, status: 'warning_needs_response' })
    )
    assert.equal(inquiry.type, 'payment.dispute_warning')
    const [chargeback] = await parse(
      'stripe',
      stripeEvent('charge.dispute.created', { ...dispute, status: 'needs_response' })
    )
    assert.equal(chargeback.type, 'payment.disputed')
    assert.equal(chargeback.data.actionableUntil, new Date(1_900_000_000_000).toISOString())
    const [closed] = await parse(
      'stripe',
      stripeEvent('charge.dispute.closed', { ...dispute, status: 'lost' })
    )
    assert.deepEqual([closed.type, closed.data.outcome], ['payment.dispute_closed', 'lost'])
  })

  test('stripe: subscriptions map to subscription.*; unknown types pass through as the gateway spells them', async ({
    assert,
  }) => {
    const [deleted] = await parse(
      'stripe',
      stripeEvent('customer.subscription.deleted', {
        id: 'sub_1',
        customer: 'cus_1',
        status: 'canceled',
      })
    )
    assert.deepEqual([deleted.type, deleted.data.status], ['subscription.canceled', 'canceled'])
    const [other] = await parse('stripe', stripeEvent('invoice.paid', { id: 'in_1' }))
    assert.equal(other.type, 'invoice.paid')
  })

  test('asaas: chargebacks, refunds and unknown events', async ({ assert }) => {
    const payment = { id: 'pay_1', value: 10.5, externalReference: 'ord' }
    const [chargeback] = await parse('asaas', {
      id: 'evt_1',
      event: 'PAYMENT_CHARGEBACK_REQUESTED',
      payment,
    })
    assert.equal(chargeback.type, 'payment.disputed')
    const [refunded] = await parse('asaas', { id: 'evt_2', event: 'PAYMENT_REFUNDED', payment })
    assert.deepEqual([refunded.type, refunded.data.amount], ['payment.refunded', 1050])
    const [anticipated] = await parse('asaas', {
      id: 'evt_3',
      event: 'PAYMENT_ANTICIPATED',
      payment,
    })
    assert.equal(anticipated.type, 'payment_anticipated')
  })

  test('adyen: refunds, chargeback notices and chargebacks; ids derive from references, code and success', async ({
    assert,
  }) => {
    const item = (eventCode: string, extra: Record<string, unknown> = {}) => ({
      NotificationRequestItem: {
        amount: { currency: 'EUR', value: 300 },
        eventCode,
        merchantAccountCode: 'M',
        merchantReference: 'ord-1',
        pspReference: `psp_${eventCode}`,
        originalReference: 'psp_auth',
        success: 'true',
        ...extra,
      },
    })
    const events = await parse('adyen', {
      live: 'false',
      notificationItems: [
        item('REFUND'),
        item('NOTIFICATION_OF_CHARGEBACK'),
        item('REQUEST_FOR_INFORMATION'),
        item('CHARGEBACK'),
        item('CHARGEBACK_REVERSED'),
        item('REPORT_AVAILABLE'),
      ],
    })
    assert.deepEqual(
      events.map((event) => event.type),
      [
        'payment.updated',
        'payment.dispute_warning',
        'payment.dispute_warning',
        'payment.disputed',
        'payment.dispute_closed',
        'report_available',
      ]
    )
    assert.deepEqual(events[0].data.refunds, [{ id: 'psp_REFUND', amount: 300 }])
    assert.equal(events[0].id, 'adyen:psp_REFUND:psp_auth:REFUND:true')
    const again = await parse('adyen', {
      live: 'false',
      notificationItems: [item('REFUND', { eventDate: 'later' })],
    })
    assert.equal(again[0].id, events[0].id, 'the id never depends on delivery metadata')
  })

  test('woovi: a refund is keyed by its own id; pagbank: a partial refund is cumulative', async ({
    assert,
  }) => {
    const [refund] = await parse('woovi', {
      event: 'OPENPIX:TRANSACTION_REFUND_RECEIVED',
      charge: { identifier: 'chg_1', correlationID: 'ord', value: 1000, status: 'COMPLETED' },
      pix: { endToEndId: 'E1', value: 1000 },
      refund: { refundId: 'rf_1', value: 300 },
    })
    assert.equal(refund.type, 'payment.updated')
    assert.deepEqual(refund.data.refunds, [{ id: 'rf_1', amount: 300 }])
    const [partial] = await parse('pagbank', {
      id: 'ORDE_1',
      charges: [
        {
          id: 'CHAR_1',
          status: 'PAID',
          amount: { value: 1000, summary: { total: 1000, paid: 1000, refunded: 200 } },
        },
      ],
    })
    assert.equal(partial.type, 'payment.updated')
    assert.equal(partial.id, 'pagbank:ORDE_1:CHAR_1:PAID:r200')
    assert.deepEqual(partial.data.refunds, [{ id: 'CHAR_1:cumulative', amount: 200 }])
  })

  test('efi: each devolucao is its own refund event', async ({ assert }) => {
    const events = await parse('efi', {
      pix: [
        {
          endToEndId: 'E9',
          txid: 'b'.repeat(30),
          valor: '50.00',
          devolucoes: [
            { id: 'D1', rtrId: 'R1', valor: '10.00', status: 'DEVOLVIDO' },
            { id: 'D2', rtrId: 'R2', valor: '5.00', status: 'EM_PROCESSAMENTO' },
          ],
        },
      ],
    })
    assert.deepEqual(
      events.map((event) => [event.id, event.type]),
      [
        ['efi:E9:D1:DEVOLVIDO', 'payment.updated'],
        ['efi:E9:D2:EM_PROCESSAMENTO', 'devolucao_em_processamento'],
      ]
    )
    assert.deepEqual(events[0].data.refunds, [{ id: 'D1', amount: 1000 }])
  })

  test('money converts decimal amounts to minor units without floats', ({ assert }) => {
    assert.equal(toMinorUnits(129.9), 12990)
    assert.equal(toMinorUnits('0.29'), 29)
    assert.equal(toMinorUnits('1500', 'JPY'), 1500)
    assert.equal(toMinorUnits('1.234', 'KWD'), 1234)
    assert.throws(() => toMinorUnits('1.234', 'BRL'), /more decimals/)
    assert.throws(() => toMinorUnits(1e21), /not a decimal/)
  })

  test('the diagnostics bus delivers to subscribers until they unsubscribe', ({ assert }) => {
    const seen: unknown[] = []
    const off = onDiagnostic('agent', 'run.started', (message) => void seen.push(message.payload))
    publishDiagnostic('agent', 'run.started', { id: 1 }, 'trace-1')
    off()
    publishDiagnostic('agent', 'run.started', { id: 2 })
    assert.deepEqual(seen, [{ id: 1 }])
  })
})
