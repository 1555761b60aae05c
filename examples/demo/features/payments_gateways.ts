import type { GatewayFactory } from 'adonis-atrium/payments'
import {
  PAYPAL_TEST_CERTIFICATE_ORIGIN,
  type SigningCredentials,
} from 'adonis-atrium/payments/testing'
import {
  DEMO_SECRETS,
  EFI_DEMO_HMAC,
  INFINITEPAY_DEMO_HANDLE,
  paypalDemoCertificate,
  wooviKeys,
} from './payments_state.ts'

/** The demo's env values the gateways read (start/env.ts gives each a default) */
export interface DemoEnv {
  get(key: string): any
}

/**
 * One gateway of the payments page. `options` is what config/payments.ts
 * passes to `gateways.<name>()`; a gateway whose driver this build does not
 * have is listed by name only and gets no route. `payload` and
 * `credentials` make the signed delivery its button posts.
 */
export interface DemoGateway {
  name: string
  label: string
  options?: (env: DemoEnv) => Record<PropertyKey, unknown>
  payload?: (n: string) => unknown
  credentials?: (env: DemoEnv) => SigningCredentials
}

const at = () => new Date().toISOString()

/**
 * Every gateway Atrium supports, in the order the page lists them. Adding a
 * gateway to the demo is one entry here.
 */
export const DEMO_GATEWAYS: DemoGateway[] = [
  {
    name: 'stripe',
    label: 'Stripe',
    options: (env) => ({ webhookSecret: env.get('STRIPE_WEBHOOK_SECRET') }),
    credentials: (env) => ({ webhookSecret: env.get('STRIPE_WEBHOOK_SECRET') }),
    payload: (n) => ({
      id: `evt_${n}`,
      object: 'event',
      type: 'payment_intent.succeeded',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: `pi_${n}`,
          amount: 2590,
          amount_received: 2590,
          currency: 'brl',
          metadata: { externalReference: `order-${n}` },
        },
      },
    }),
  },
  {
    name: 'abacatepay',
    label: 'AbacatePay',
    options: (env) => ({
      webhookSecret: env.get('ABACATEPAY_WEBHOOK_SECRET'),
      publicKey: env.get('ABACATEPAY_PUBLIC_KEY'),
    }),
    credentials: (env) => ({
      webhookSecret: env.get('ABACATEPAY_WEBHOOK_SECRET'),
      publicKey: env.get('ABACATEPAY_PUBLIC_KEY'),
    }),
    payload: (n) => ({
      id: `log_${n}`,
      event: 'billing.paid',
      devMode: true,
      data: {
        billing: { id: `bill_${n}`, amount: 4200, metadata: { externalReference: `order-${n}` } },
      },
    }),
  },
  {
    name: 'asaas',
    label: 'Asaas',
    options: (env) => ({ webhookToken: env.get('ASAAS_WEBHOOK_TOKEN') }),
    credentials: (env) => ({ webhookToken: env.get('ASAAS_WEBHOOK_TOKEN') }),
    payload: (n) => ({
      id: `evt_${n}`,
      event: 'PAYMENT_RECEIVED',
      payment: {
        id: `pay_${n}`,
        value: 129.9,
        status: 'RECEIVED',
        externalReference: `order-${n}`,
      },
    }),
  },
  {
    name: 'woovi',
    label: 'Woovi',
    options: () => ({ webhookPublicKey: wooviKeys.publicKey }),
    credentials: () => ({ privateKey: wooviKeys.privateKey }),
    payload: (n) => ({
      event: 'OPENPIX:CHARGE_COMPLETED',
      charge: {
        status: 'COMPLETED',
        value: 1500,
        correlationID: `order-${n}`,
        identifier: `chg_${n}`,
      },
      pix: { endToEndId: `E${n}`, value: 1500, time: at() },
    }),
  },
  {
    name: 'pagbank',
    label: 'PagBank',
    options: (env) => ({ webhookToken: env.get('PAGBANK_WEBHOOK_TOKEN') }),
    credentials: (env) => ({ webhookToken: env.get('PAGBANK_WEBHOOK_TOKEN') }),
    payload: (n) => ({
      id: `ORDE_${n}`,
      reference_id: `order-${n}`,
      charges: [
        {
          id: `CHAR_${n}`,
          status: 'PAID',
          amount: {
            value: 9990,
            currency: 'BRL',
            summary: { total: 9990, paid: 9990, refunded: 0 },
          },
        },
      ],
    }),
  },
  {
    name: 'adyen',
    label: 'Adyen',
    options: (env) => ({ hmacKey: env.get('ADYEN_HMAC_KEY') }),
    credentials: (env) => ({ hmacKey: env.get('ADYEN_HMAC_KEY') }),
    payload: (n) => ({
      live: 'false',
      notificationItems: [
        {
          NotificationRequestItem: {
            amount: { currency: 'EUR', value: 1130 },
            eventCode: 'AUTHORISATION',
            merchantAccountCode: 'DemoMerchant',
            merchantReference: `order-${n}`,
            pspReference: `psp${n}`,
            success: 'true',
          },
        },
      ],
    }),
  },
  {
    name: 'efi',
    label: 'Efí',
    options: () => ({ webhookHmac: EFI_DEMO_HMAC }),
    credentials: () => ({ webhookHmac: EFI_DEMO_HMAC }),
    payload: (n) => ({
      pix: [
        { endToEndId: `E${n}`, txid: `demo${n}`.padEnd(30, '0'), valor: '110.50', horario: at() },
      ],
    }),
  },
  {
    name: 'infinitepay',
    label: 'InfinitePay',
    options: (env) => ({
      handle: INFINITEPAY_DEMO_HANDLE,
      apiBaseUrl: `http://127.0.0.1:${env.get('PORT')}/payments/demo/infinitepay`,
    }),
    credentials: () => ({}),
    payload: (n) => ({
      invoice_slug: `inv-${n}`,
      amount: 1000,
      paid_amount: 1000,
      transaction_nsu: `tx-${n}`,
      order_nsu: `order-${n}`,
    }),
  },
  {
    name: 'mercadopago',
    label: 'Mercado Pago',
    // Mercado Pago signs the notified id only: the driver reads the payment from
    // its API, which this app stands in for under /payments/demo/mercadopago
    options: (env) => ({
      webhookSecret: DEMO_SECRETS.mercadopago,
      accessToken: DEMO_SECRETS.mercadopagoAccessToken,
      apiBaseUrl: `http://127.0.0.1:${env.get('PORT')}/payments/demo/mercadopago`,
    }),
    credentials: () => ({ webhookSecret: DEMO_SECRETS.mercadopago }),
    payload: (n) => ({
      id: Number(n.slice(-9)),
      live_mode: false,
      type: 'payment',
      date_created: at(),
      action: 'payment.created',
      data: { id: n },
    }),
  },
  {
    name: 'paddle',
    label: 'Paddle Billing',
    options: () => ({ webhookSecret: DEMO_SECRETS.paddle }),
    credentials: () => ({ webhookSecret: DEMO_SECRETS.paddle }),
    payload: (n) => ({
      event_id: `evt_${n}`,
      event_type: 'transaction.completed',
      occurred_at: at(),
      data: {
        id: `txn_${n}`,
        status: 'completed',
        currency_code: 'USD',
        custom_data: { externalReference: `order-${n}` },
        details: { totals: { grand_total: '2500' } },
      },
    }),
  },
  {
    name: 'lemonsqueezy',
    label: 'Lemon Squeezy',
    options: () => ({ signingSecret: DEMO_SECRETS.lemonsqueezy }),
    credentials: () => ({ webhookSecret: DEMO_SECRETS.lemonsqueezy }),
    payload: (n) => ({
      meta: {
        event_name: 'order_created',
        test_mode: true,
        custom_data: { externalReference: `order-${n}` },
      },
      data: {
        type: 'orders',
        id: `ls_${n}`,
        attributes: {
          currency: 'USD',
          status: 'paid',
          total: 2590,
          refunded: false,
          created_at: at(),
          updated_at: at(),
        },
      },
    }),
  },
  {
    name: 'paypal',
    label: 'PayPal',
    // The demo serves its own certificate from this app: PayPal's hosts are not reachable here
    options: (env) => ({
      webhookId: DEMO_SECRETS.paypalWebhookId,
      [PAYPAL_TEST_CERTIFICATE_ORIGIN]: `http://127.0.0.1:${env.get('PORT')}`,
    }),
    credentials: (env) => ({
      privateKey: paypalDemoCertificate.privateKey(),
      certUrl: `http://127.0.0.1:${env.get('PORT')}/v1/notifications/certs/CERT-atrium-demo`,
      webhookId: DEMO_SECRETS.paypalWebhookId,
    }),
    payload: (n) => ({
      id: `WH-${n}`,
      event_type: 'PAYMENT.CAPTURE.COMPLETED',
      create_time: at(),
      resource: {
        id: `CAP${n}`,
        status: 'COMPLETED',
        amount: { currency_code: 'USD', value: '19.90' },
        custom_id: `order-${n}`,
      },
    }),
  },
  {
    name: 'mollie',
    label: 'Mollie',
    options: () => ({ webhookSecret: DEMO_SECRETS.mollie }),
    credentials: () => ({ webhookSecret: DEMO_SECRETS.mollie }),
    payload: (n) => ({
      resource: 'event',
      id: `event_${n}`,
      type: 'payment-link.paid',
      entityId: `pl_${n}`,
      createdAt: at(),
      _embedded: {
        entity: {
          id: `pl_${n}`,
          amount: { currency: 'EUR', value: '24.95' },
          paidAt: at(),
          metadata: { externalReference: `order-${n}` },
        },
      },
    }),
  },
  {
    name: 'pagarme',
    label: 'Pagar.me',
    options: () => ({ secretKey: DEMO_SECRETS.pagarme }),
    credentials: () => ({ secretKey: DEMO_SECRETS.pagarme }),
    payload: (n) => ({
      id: `hook_${n}`,
      type: 'charge.paid',
      created_at: at(),
      data: {
        id: `ch_${n}`,
        code: `order-${n}`,
        amount: 9990,
        paid_amount: 9990,
        status: 'paid',
        currency: 'BRL',
        payment_method: 'pix',
        paid_at: at(),
      },
    }),
  },
  {
    name: 'polar',
    label: 'Polar',
    options: () => ({ webhookSecret: DEMO_SECRETS.polar }),
    credentials: () => ({ webhookSecret: DEMO_SECRETS.polar }),
    payload: (n) => ({
      type: 'order.paid',
      timestamp: at(),
      data: {
        id: `ord_${n}`,
        total_amount: 1200,
        currency: 'usd',
        metadata: { externalReference: `order-${n}` },
      },
    }),
  },
  {
    name: 'dodopayments',
    label: 'Dodo Payments',
    options: () => ({ webhookSecret: DEMO_SECRETS.dodopayments }),
    credentials: () => ({ webhookSecret: DEMO_SECRETS.dodopayments }),
    payload: (n) => ({
      business_id: 'bus_demo',
      type: 'payment.succeeded',
      timestamp: at(),
      data: {
        payment_id: `pay_${n}`,
        total_amount: 1500,
        currency: 'USD',
        metadata: { externalReference: `order-${n}` },
      },
    }),
  },
  {
    name: 'razorpay',
    label: 'Razorpay',
    options: () => ({ webhookSecret: DEMO_SECRETS.razorpay }),
    credentials: () => ({ webhookSecret: DEMO_SECRETS.razorpay }),
    payload: (n) => ({
      entity: 'event',
      event: 'payment.captured',
      contains: ['payment'],
      payload: {
        payment: {
          entity: {
            id: `pay_${n}`,
            entity: 'payment',
            amount: 50000,
            currency: 'INR',
            status: 'captured',
            notes: { externalReference: `order-${n}` },
            created_at: Math.floor(Date.now() / 1000),
          },
        },
      },
      created_at: Math.floor(Date.now() / 1000),
    }),
  },
  {
    name: 'square',
    label: 'Square',
    // Square signs the notification URL with the body: the demo's own route
    options: (env) => ({
      signatureKey: DEMO_SECRETS.square,
      notificationUrl: `http://127.0.0.1:${env.get('PORT')}/payments/webhook/square`,
    }),
    credentials: (env) => ({
      signatureKey: DEMO_SECRETS.square,
      notificationUrl: `http://127.0.0.1:${env.get('PORT')}/payments/webhook/square`,
    }),
    payload: (n) => ({
      merchant_id: 'MLEFBHHSJGVHD',
      type: 'payment.updated',
      event_id: `evt-${n}`,
      created_at: at(),
      data: {
        type: 'payment',
        id: `sq_${n}`,
        object: {
          payment: {
            id: `sq_${n}`,
            amount_money: { amount: 1099, currency: 'USD' },
            status: 'COMPLETED',
            reference_id: `order-${n}`,
            updated_at: at(),
          },
        },
      },
    }),
  },
]

/**
 * `providers` for config/payments.ts: every listed gateway whose driver
 * this build has (`available`: the factories `gateways` exports).
 */
export function demoProviders(env: DemoEnv, available: object): Record<string, GatewayFactory> {
  const factories = available as Record<string, (options: any) => GatewayFactory>
  return Object.fromEntries(
    DEMO_GATEWAYS.filter((gateway) => gateway.options && factories[gateway.name]).map((gateway) => [
      gateway.name,
      factories[gateway.name](gateway.options!(env)),
    ])
  )
}
