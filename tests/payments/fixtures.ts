/**
 * One realistic delivery per gateway, as each documents its payloads, with
 * the payment row it should produce. `note` carries non-ASCII text.
 */
export const NOTE = 'Pedido São João — café ✓ 日本'

export interface GatewayFixture {
  payload: (id: string) => unknown
  paymentId: (id: string) => string
  amount: number
  externalReference: (id: string) => string | null
}

export const FIXTURES: Record<string, GatewayFixture> = {
  stripe: {
    payload: (id) => ({
      id: `evt_${id}`,
      object: 'event',
      type: 'payment_intent.succeeded',
      created: 1_700_000_000,
      data: {
        object: {
          id: `pi_${id}`,
          object: 'payment_intent',
          amount: 2590,
          amount_received: 2590,
          currency: 'brl',
          customer: 'cus_1',
          description: NOTE,
          metadata: { externalReference: `order-${id}` },
        },
      },
    }),
    paymentId: (id) => `pi_${id}`,
    amount: 2590,
    externalReference: (id) => `order-${id}`,
  },
  abacatepay: {
    payload: (id) => ({
      id: `log_${id}`,
      event: 'billing.paid',
      devMode: true,
      data: {
        billing: {
          id: `bill_${id}`,
          amount: 4200,
          status: 'PAID',
          metadata: { externalReference: `order-${id}`, note: NOTE },
        },
        payment: { amount: 4200, fee: 80, method: 'PIX' },
      },
    }),
    paymentId: (id) => `bill_${id}`,
    amount: 4200,
    externalReference: (id) => `order-${id}`,
  },
  asaas: {
    payload: (id) => ({
      id: `evt_${id}`,
      event: 'PAYMENT_RECEIVED',
      dateCreated: '2024-06-12 16:45:03',
      payment: {
        object: 'payment',
        id: `pay_${id}`,
        customer: 'cus_000005219613',
        value: 129.9,
        netValue: 127.91,
        billingType: 'PIX',
        status: 'RECEIVED',
        description: NOTE,
        externalReference: `order-${id}`,
        paymentDate: '2024-06-12',
      },
    }),
    paymentId: (id) => `pay_${id}`,
    amount: 12990,
    externalReference: (id) => `order-${id}`,
  },
  woovi: {
    payload: (id) => ({
      event: 'OPENPIX:CHARGE_COMPLETED',
      charge: {
        status: 'COMPLETED',
        value: 1500,
        comment: NOTE,
        correlationID: `order-${id}`,
        identifier: `chg_${id}`,
        paidAt: '2024-06-12T16:45:03.000Z',
      },
      pix: { endToEndId: `E${id}`, value: 1500, time: '2024-06-12T16:45:03.000Z' },
    }),
    paymentId: (id) => `chg_${id}`,
    amount: 1500,
    externalReference: (id) => `order-${id}`,
  },
  pagbank: {
    payload: (id) => ({
      id: `ORDE_${id}`,
      reference_id: `order-${id}`,
      customer: { name: NOTE, tax_id: '12345678909' },
      charges: [
        {
          id: `CHAR_${id}`,
          reference_id: `order-${id}`,
          status: 'PAID',
          paid_at: '2024-06-12T16:45:03.000-03:00',
          amount: {
            value: 9990,
            currency: 'BRL',
            summary: { total: 9990, paid: 9990, refunded: 0 },
          },
        },
      ],
    }),
    paymentId: (id) => `CHAR_${id}`,
    amount: 9990,
    externalReference: (id) => `order-${id}`,
  },
  adyen: {
    payload: (id) => ({
      live: 'false',
      notificationItems: [
        {
          NotificationRequestItem: {
            additionalData: { shopperName: NOTE },
            amount: { currency: 'EUR', value: 1130 },
            eventCode: 'AUTHORISATION',
            eventDate: '2024-06-12T16:45:03+02:00',
            merchantAccountCode: 'TestMerchant',
            merchantReference: `order-${id}`,
            pspReference: `psp${id}`,
            reason: NOTE,
            success: 'true',
          },
        },
      ],
    }),
    paymentId: (id) => `psp${id}`,
    amount: 1130,
    externalReference: (id) => `order-${id}`,
  },
  efi: {
    payload: (id) => ({
      pix: [
        {
          endToEndId: `E0000000020240612${id}`,
          // padded with a letter no id contains: 'a1' and 'a10' stay two txids
          txid: `txid${id}`.padEnd(30, 'x').slice(0, 30),
          chave: 'chave@example.com',
          valor: '110.50',
          horario: '2024-06-12T16:45:03.000Z',
          infoPagador: NOTE,
        },
      ],
    }),
    paymentId: (id) => `txid${id}`.padEnd(30, 'x').slice(0, 30),
    amount: 11050,
    externalReference: (id) => `txid${id}`.padEnd(30, 'x').slice(0, 30),
  },
  infinitepay: {
    payload: (id) => ({
      invoice_slug: `inv-${id}`,
      amount: 1000,
      paid_amount: 1010,
      installments: 1,
      capture_method: 'pix',
      transaction_nsu: `tx-${id}`,
      order_nsu: `order-${id}`,
      receipt_url: 'https://example.com/receipt',
      items: [{ description: NOTE, quantity: 1, price: 1000 }],
    }),
    paymentId: (id) => `tx-${id}`,
    amount: 1010,
    externalReference: (id) => `order-${id}`,
  },
  fake: {
    payload: (id) => ({
      id: `fake_${id}`,
      type: 'payment.succeeded',
      data: {
        paymentId: `fp_${id}`,
        amount: 700,
        currency: 'BRL',
        externalReference: `order-${id}`,
        note: NOTE,
      },
    }),
    paymentId: (id) => `fp_${id}`,
    amount: 700,
    externalReference: (id) => `order-${id}`,
  },
}

/** Gateways that sign their deliveries */
export const SIGNED = [
  'stripe',
  'abacatepay',
  'asaas',
  'woovi',
  'pagbank',
  'adyen',
  'fake',
] as const

/** Credentials that are well formed but wrong */
export const WRONG_CREDENTIALS: Record<string, Record<string, unknown>> = {
  stripe: { webhookSecret: 'whsec_wrong' },
  abacatepay: { webhookSecret: 'abacate-url-secret', publicKey: 'not-the-public-key' },
  asaas: { webhookToken: 'wrong-token' },
  pagbank: { webhookToken: 'wrong-token' },
  adyen: { hmacKey: 'AA'.repeat(32) },
  fake: { webhookSecret: 'wrong' },
}
