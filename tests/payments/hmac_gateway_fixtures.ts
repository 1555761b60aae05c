import { NOTE, type GatewayFixture } from './fixtures.ts'

/**
 * One realistic delivery per gateway of Lemon Squeezy, Mercado Pago,
 * Pagar.me, Razorpay and Square, as each documents its payloads, with the
 * payment row it should produce. Mercado Pago's notification carries only
 * the payment id: `mercadoPagoPayment` is the payment its API answers.
 */
export const HMAC_GATEWAY_FIXTURES: Record<string, GatewayFixture> = {
  lemonsqueezy: {
    payload: (id) => ({
      meta: {
        event_name: 'order_created',
        test_mode: true,
        custom_data: { externalReference: `order-${id}` },
      },
      data: {
        type: 'orders',
        id: `ls_${id}`,
        attributes: {
          store_id: 1,
          customer_id: 7,
          identifier: `104e18a2-${id}`,
          user_name: NOTE,
          currency: 'USD',
          status: 'paid',
          subtotal: 2590,
          total: 2590,
          refunded: false,
          refunded_amount: 0,
          created_at: '2024-06-12T16:45:03.000000Z',
          updated_at: '2024-06-12T16:45:03.000000Z',
        },
      },
    }),
    paymentId: (id) => `ls_${id}`,
    amount: 2590,
    externalReference: (id) => `order-${id}`,
  },
  mercadopago: {
    payload: (id) => ({
      id: 12345678901,
      live_mode: false,
      type: 'payment',
      date_created: '2024-06-12T16:45:03.000-03:00',
      user_id: 44444,
      api_version: 'v1',
      action: 'payment.created',
      data: { id: `${id}` },
    }),
    paymentId: (id) => `${id}`,
    amount: 12990,
    externalReference: (id) => `order-${id}`,
  },
  pagarme: {
    payload: (id) => ({
      id: `hook_${id}`,
      account: { id: 'acc_1', name: NOTE },
      type: 'charge.paid',
      created_at: '2024-06-12T19:45:03.000Z',
      data: {
        id: `ch_${id}`,
        code: `order-${id}`,
        amount: 9990,
        paid_amount: 9990,
        status: 'paid',
        currency: 'BRL',
        payment_method: 'pix',
        paid_at: '2024-06-12T19:45:03.000Z',
        customer: { id: 'cus_1', name: NOTE },
      },
    }),
    paymentId: (id) => `ch_${id}`,
    amount: 9990,
    externalReference: (id) => `order-${id}`,
  },
  razorpay: {
    payload: (id) => ({
      entity: 'event',
      account_id: 'acc_BFQ7uQEaa7j2z7',
      event: 'payment.captured',
      contains: ['payment'],
      payload: {
        payment: {
          entity: {
            id: `pay_${id}`,
            entity: 'payment',
            amount: 50000,
            currency: 'INR',
            status: 'captured',
            order_id: `order_${id}`,
            method: 'upi',
            description: NOTE,
            notes: { externalReference: `order-${id}` },
            created_at: 1_718_210_703,
          },
        },
      },
      created_at: 1_718_210_704,
    }),
    paymentId: (id) => `pay_${id}`,
    amount: 50000,
    externalReference: (id) => `order-${id}`,
  },
  square: {
    payload: (id) => ({
      merchant_id: 'MLEFBHHSJGVHD',
      type: 'payment.updated',
      event_id: `6a8f5f28-54a1-4eb0-a98a-${id}`,
      created_at: '2024-06-12T19:45:03.000Z',
      data: {
        type: 'payment',
        id: `sq_${id}`,
        object: {
          payment: {
            id: `sq_${id}`,
            amount_money: { amount: 1099, currency: 'USD' },
            status: 'COMPLETED',
            reference_id: `order-${id}`,
            note: NOTE,
            updated_at: '2024-06-12T19:45:03.000Z',
          },
        },
      },
    }),
    paymentId: (id) => `sq_${id}`,
    amount: 1099,
    externalReference: (id) => `order-${id}`,
  },
}

/** The payment Mercado Pago's API answers for the notified `data.id` */
export function mercadoPagoPayment(id: string, changes: Record<string, unknown> = {}) {
  return {
    id,
    status: 'approved',
    status_detail: 'accredited',
    transaction_amount: 129.9,
    transaction_amount_refunded: 0,
    currency_id: 'BRL',
    description: NOTE,
    external_reference: `order-${id}`,
    date_approved: '2024-06-12T16:45:03.000-04:00',
    date_last_updated: '2024-06-12T16:45:03.000-04:00',
    payer: { id: '123' },
    ...changes,
  }
}

/** Credentials that are well formed but wrong */
export const WRONG_CREDENTIALS_A: Record<string, Record<string, unknown>> = {
  lemonsqueezy: { webhookSecret: 'not-the-signing-secret' },
  mercadopago: { webhookSecret: 'not-the-webhook-secret' },
  pagarme: { secretKey: 'sk_test_wrong' },
  razorpay: { webhookSecret: 'not-the-webhook-secret' },
  square: {
    signatureKey: 'not-the-signature-key',
    notificationUrl: 'https://shop.example/payments/webhook/square',
  },
}
