/**
 * Paddle, Polar, Dodo Payments, PayPal and Mollie: the gateways whose
 * drivers verify through a published library or certificate (Paddle's SDK,
 * Standard Webhooks, PayPal's certificate chain, Mollie's API client), with
 * the loopback stand-ins and credentials their tests share.
 */
import { gateways } from '../../src/payments/main.ts'
import {
  PAYPAL_TEST_CERTIFICATE_ORIGIN,
  type SigningCredentials,
} from '../../src/payments/testing.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { makeCertificate, mollieStandIn, paypalCertificateHost } from './sdk_gateway_stand_ins.ts'

export const SDK_GATEWAYS = ['paddle', 'polar', 'dodopayments', 'paypal', 'mollie'] as const
export type SdkGateway = (typeof SDK_GATEWAYS)[number]

export const SECRETS = {
  paddle: 'pdl_ntfset_01atriumtest_secret',
  polar: 'polar_whs_atrium_test_secret',
  dodopayments: `whsec_${Buffer.from('dodo-payments-atrium-test-key-32').toString('base64')}`,
  paypalWebhookId: '1JE4291016473214C',
  mollie: 'mollie_atrium_signing_secret',
  mollieApiKey: 'test_atriumMollieApiKey0000000000',
}

/** PayPal's signing certificate stand-in, made once per run */
export const PAYPAL_CERT = makeCertificate()

/**
 * The five gateways configured against loopback stand-ins (PayPal's
 * certificate host, Mollie's API), and the credentials that sign for them.
 */
export async function sdkGateways() {
  const certs = await paypalCertificateHost()
  const certUrl = certs.serve('CERT-360caa42-atrium', PAYPAL_CERT.certificate)
  const mollie = await mollieStandIn(SECRETS.mollieApiKey)
  const providers = {
    paddle: gateways.paddle({ webhookSecret: SECRETS.paddle }),
    polar: gateways.polar({ webhookSecret: SECRETS.polar }),
    dodopayments: gateways.dodopayments({ webhookSecret: SECRETS.dodopayments }),
    paypal: gateways.paypal({
      webhookId: SECRETS.paypalWebhookId,
      [PAYPAL_TEST_CERTIFICATE_ORIGIN]: certs.origin,
    }),
    mollie: gateways.mollie({
      webhookSecret: SECRETS.mollie,
      apiKey: SECRETS.mollieApiKey,
      apiEndpoint: mollie.apiEndpoint,
    }),
  }
  const credentials: Record<SdkGateway, SigningCredentials> = {
    paddle: { webhookSecret: SECRETS.paddle },
    polar: { webhookSecret: SECRETS.polar },
    dodopayments: { webhookSecret: SECRETS.dodopayments },
    paypal: { privateKey: PAYPAL_CERT.privateKey, certUrl, webhookId: SECRETS.paypalWebhookId },
    mollie: { webhookSecret: SECRETS.mollie },
  }
  return { providers, credentials, certs, certUrl, mollie }
}

/** A request as the route hands it to a driver */
export function webhookRequest(signed: {
  body: string
  headers: Record<string, string>
}): WebhookRequest {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = value
  return { rawBody: Buffer.from(signed.body), headers, query: {} }
}

const NOW = '2026-11-20T10:00:00Z'

/* Payloads shaped as each gateway documents them; `key` keeps ids unique per test */

export const paddle = {
  event: (key: string, type: string, data: Record<string, unknown>) => ({
    event_id: `evt_${key}`,
    event_type: type,
    occurred_at: NOW,
    notification_id: `ntf_${key}`,
    data,
  }),
  transaction: (key: string, type = 'transaction.completed') =>
    paddle.event(key, type, {
      id: `txn_${key}`,
      status: type === 'transaction.completed' ? 'completed' : 'past_due',
      customer_id: 'ctm_01',
      currency_code: 'USD',
      custom_data: { externalReference: `order-${key}`, note: 'São João café' },
      details: { totals: { total: '1130', grand_total: '1130' } },
      billed_at: NOW,
    }),
  adjustment: (key: string, action: string, extra: Record<string, unknown> = {}) =>
    paddle.event(key, 'adjustment.created', {
      id: `adj_${key}`,
      action,
      transaction_id: `txn_${key}`,
      customer_id: 'ctm_01',
      reason: 'requested_by_customer',
      status: 'approved',
      type: 'partial',
      currency_code: 'USD',
      totals: { total: '300', currency_code: 'USD' },
      ...extra,
    }),
  subscription: (key: string, type: string) =>
    paddle.event(key, type, {
      id: `sub_${key}`,
      status: type === 'subscription.canceled' ? 'canceled' : 'active',
      customer_id: 'ctm_01',
      items: [{ price: { id: 'pri_01' } }],
      current_billing_period: { ends_at: '2026-12-20T10:00:00Z' },
      custom_data: { externalReference: `order-${key}` },
    }),
}

export const polar = {
  event: (type: string, data: Record<string, unknown>) => ({ type, timestamp: NOW, data }),
  order: (key: string, type = 'order.paid', extra: Record<string, unknown> = {}) =>
    polar.event(type, {
      id: `ord_${key}`,
      status: 'paid',
      total_amount: 1130,
      currency: 'usd',
      refunded_amount: 0,
      customer_id: 'cus_01',
      metadata: { externalReference: `order-${key}`, note: 'São João café' },
      created_at: NOW,
      ...extra,
    }),
  refund: (key: string) =>
    polar.event('refund.created', {
      id: `ref_${key}`,
      order_id: `ord_${key}`,
      amount: 300,
      currency: 'usd',
      status: 'succeeded',
      metadata: {},
    }),
  subscription: (key: string, type: string) =>
    polar.event(type, {
      id: `sub_${key}`,
      status: type === 'subscription.revoked' ? 'canceled' : 'active',
      customer_id: 'cus_01',
      product_id: 'prod_01',
      current_period_end: '2026-12-20T10:00:00Z',
      metadata: { externalReference: `order-${key}` },
    }),
}

export const dodo = {
  event: (type: string, data: Record<string, unknown>) => ({
    business_id: 'bus_01',
    type,
    timestamp: NOW,
    data,
  }),
  payment: (key: string, type = 'payment.succeeded') =>
    dodo.event(type, {
      payload_type: 'Payment',
      payment_id: `pay_${key}`,
      total_amount: 1130,
      currency: 'USD',
      status: type === 'payment.succeeded' ? 'succeeded' : 'failed',
      customer: { customer_id: 'cus_01', email: 'ana@example.com' },
      metadata: { externalReference: `order-${key}`, note: 'São João café' },
      created_at: NOW,
    }),
  refund: (key: string) =>
    dodo.event('refund.succeeded', {
      payload_type: 'Refund',
      refund_id: `ref_${key}`,
      payment_id: `pay_${key}`,
      amount: 300,
      currency: 'USD',
      status: 'succeeded',
    }),
  dispute: (key: string, type: string, stage = 'dispute') =>
    dodo.event(type, {
      payload_type: 'Dispute',
      dispute_id: `dsp_${key}`,
      payment_id: `pay_${key}`,
      amount: '1130',
      currency: 'USD',
      dispute_stage: stage,
      dispute_status: type.replace('.', '_'),
    }),
  subscription: (key: string, type: string) =>
    dodo.event(type, {
      payload_type: 'Subscription',
      subscription_id: `sub_${key}`,
      product_id: 'pdt_01',
      status: 'active',
      customer: { customer_id: 'cus_01' },
      next_billing_date: '2026-12-20T10:00:00Z',
      metadata: { externalReference: `order-${key}` },
    }),
}

export const paypal = {
  event: (key: string, type: string, resource: Record<string, unknown>) => ({
    id: `WH-${key}`,
    event_version: '1.0',
    create_time: NOW,
    resource_type: 'capture',
    event_type: type,
    summary: type,
    resource,
  }),
  capture: (key: string, type = 'PAYMENT.CAPTURE.COMPLETED') =>
    paypal.event(key, type, {
      id: `CAP${key}`,
      status: type === 'PAYMENT.CAPTURE.COMPLETED' ? 'COMPLETED' : 'DECLINED',
      amount: { currency_code: 'USD', value: '11.30' },
      custom_id: `order-${key}`,
      invoice_id: `inv-${key}`,
      note: 'São João café',
      create_time: NOW,
    }),
  refund: (key: string) =>
    paypal.event(key, 'PAYMENT.CAPTURE.REFUNDED', {
      id: `REF${key}`,
      status: 'COMPLETED',
      amount: { currency_code: 'USD', value: '3.00' },
      seller_payable_breakdown: { total_refunded_amount: { currency_code: 'USD', value: '3.00' } },
      custom_id: `order-${key}`,
      links: [{ rel: 'up', href: `https://api.paypal.com/v2/payments/captures/CAP${key}` }],
    }),
  dispute: (key: string, type: string, stage = 'CHARGEBACK', outcome?: string) =>
    paypal.event(key, type, {
      dispute_id: `PP-D-${key}`,
      disputed_transactions: [{ seller_transaction_id: `CAP${key}` }],
      reason: 'MERCHANDISE_OR_SERVICE_NOT_RECEIVED',
      status: 'OPEN',
      dispute_amount: { currency_code: 'USD', value: '11.30' },
      dispute_life_cycle_stage: stage,
      seller_response_due_date: '2026-12-01T10:00:00Z',
      ...(outcome ? { dispute_outcome: { outcome_code: outcome } } : {}),
    }),
  subscription: (key: string, type: string) =>
    paypal.event(key, type, {
      id: `I-${key}`,
      plan_id: 'P-01',
      status: 'ACTIVE',
      custom_id: `order-${key}`,
      subscriber: { payer_id: 'PAYER01' },
      billing_info: { next_billing_time: '2026-12-20T10:00:00Z' },
    }),
}

export const mollie = {
  /** A payment as Mollie's API answers it */
  payment: (key: string, status = 'paid', extra: Record<string, unknown> = {}) => ({
    id: `tr_${key}`,
    status,
    amount: { value: '11.30', currency: 'EUR' },
    description: 'Order São João',
    metadata: { externalReference: `order-${key}` },
    createdAt: NOW,
    ...(status === 'paid' ? { paidAt: NOW } : {}),
    ...extra,
  }),
  /** A next-gen event with its entity embedded */
  linkPaid: (key: string) => ({
    resource: 'event',
    id: `event_${key}`,
    type: 'payment-link.paid',
    entityId: `pl_${key}`,
    createdAt: NOW,
    _embedded: {
      entity: {
        resource: 'payment-link',
        id: `pl_${key}`,
        description: 'Bicycle tires, São João café',
        amount: { currency: 'EUR', value: '11.30' },
        paidAt: NOW,
        metadata: { externalReference: `order-${key}` },
      },
    },
  }),
}

/** A payment.succeeded-like delivery of each gateway, its payment id and reference */
export const SUCCEEDED: Record<
  SdkGateway,
  (key: string) => { payload: unknown; paymentId: string }
> = {
  paddle: (key) => ({ payload: paddle.transaction(key), paymentId: `txn_${key}` }),
  polar: (key) => ({ payload: polar.order(key), paymentId: `ord_${key}` }),
  dodopayments: (key) => ({ payload: dodo.payment(key), paymentId: `pay_${key}` }),
  paypal: (key) => ({ payload: paypal.capture(key), paymentId: `CAP${key}` }),
  mollie: (key) => ({ payload: mollie.linkPaid(key), paymentId: `pl_${key}` }),
}
