import { createVerify } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { BaseGatewayDriver } from './base_driver.ts'
import debug from '../debug.ts'
import { reject, WebhookRejectedException } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { toMinorUnits } from '../money.ts'
import type { DisputeOutcome, WebhookEvent, WebhookRequest } from '../types.ts'
import { header, isObject, isoDate, jsonObject, optionalString, requiredString } from './helpers.ts'
import { PAYPAL_TEST_CERTIFICATE_ORIGIN, PayPalCertificateStore } from './paypal_certificates.ts'

export interface PayPalGatewayOptions {
  /** The id PayPal gave the webhook (PAYPAL_WEBHOOK_ID): part of every signed message */
  webhookId?: string
  /** REST app client id, for the verify API and `--create` (PAYPAL_CLIENT_ID) */
  clientId?: string
  /** REST app secret (PAYPAL_CLIENT_SECRET) */
  clientSecret?: string
  /** Ask PayPal's verify-webhook-signature API instead of checking offline */
  verifyWithApi?: boolean
  /** Use the sandbox API (`api-m.sandbox.paypal.com`) */
  sandbox?: boolean
  /** Base URL of PayPal's REST API, for tests and proxies */
  apiBaseUrl?: string
  /** Seconds a transmission stays acceptable (default 300) */
  tolerance?: number
  /** How long a fetched certificate is cached, in ms (default 24 hours) */
  certificateTtlMs?: number
  /** Tests only: a loopback origin certificates may also come from (see `adonis-atrium/payments/testing`) */
  [PAYPAL_TEST_CERTIFICATE_ORIGIN]?: string
}

export const PAYPAL_EVENTS = [
  'PAYMENT.CAPTURE.COMPLETED',
  'PAYMENT.CAPTURE.DENIED',
  'PAYMENT.CAPTURE.DECLINED',
  'PAYMENT.CAPTURE.REFUNDED',
  'CUSTOMER.DISPUTE.CREATED',
  'CUSTOMER.DISPUTE.UPDATED',
  'CUSTOMER.DISPUTE.RESOLVED',
  'BILLING.SUBSCRIPTION.CREATED',
  'BILLING.SUBSCRIPTION.ACTIVATED',
  'BILLING.SUBSCRIPTION.UPDATED',
  'BILLING.SUBSCRIPTION.SUSPENDED',
  'BILLING.SUBSCRIPTION.CANCELLED',
  'BILLING.SUBSCRIPTION.EXPIRED',
]

/**
 * The message PayPal signs: `<transmission id>|<transmission time>|<webhook id>|<CRC32 of the raw body, decimal>`.
 */
export function paypalSignedMessage(
  transmissionId: string,
  transmissionTime: string,
  webhookId: string,
  rawBody: Buffer | string
) {
  return `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(rawBody) >>> 0}`
}

export function paypalApiBase(options: Pick<PayPalGatewayOptions, 'apiBaseUrl' | 'sandbox'>) {
  return (
    options.apiBaseUrl ??
    (options.sandbox ? 'https://api-m.sandbox.paypal.com' : 'https://api-m.paypal.com')
  ).replace(/\/+$/, '')
}

/**
 * An OAuth access token for the REST app (client credentials).
 */
export async function paypalAccessToken(options: PayPalGatewayOptions, timeoutMs = 10_000) {
  const response = await fetch(`${paypalApiBase(options)}/v1/oauth2/token`, {
    method: 'POST',
    headers: {
      'authorization': `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      'accept': 'application/json',
    },
    body: 'grant_type=client_credentials',
    signal: AbortSignal.timeout(timeoutMs),
  })
  const answer = (await response.json().catch(() => undefined)) as any
  if (!response.ok || typeof answer?.access_token !== 'string') {
    throw new Error(`PayPal OAuth answered ${response.status}`)
  }
  return answer.access_token as string
}

const TRANSMISSION_HEADERS = [
  'paypal-transmission-id',
  'paypal-transmission-time',
  'paypal-transmission-sig',
  'paypal-cert-url',
  'paypal-auth-algo',
] as const

/**
 * PayPal: the transmission signature (RSA-SHA256 over
 * `id|time|webhook id|crc32(body)`) is verified offline against the
 * certificate named by `paypal-cert-url`, fetched only from PayPal's hosts
 * and cached; with `verifyWithApi`, PayPal's verify-webhook-signature API
 * answers instead.
 */
export class PayPalDriver extends BaseGatewayDriver<PayPalGatewayOptions> {
  readonly subscribedEvents = PAYPAL_EVENTS
  readonly certificates: PayPalCertificateStore
  #verified = new WeakMap<WebhookRequest, Record<string, any>>()

  constructor(options: PayPalGatewayOptions) {
    super('paypal', options)
    this.certificates = new PayPalCertificateStore({
      ttlMs: options.certificateTtlMs,
      testOrigin: options[PAYPAL_TEST_CERTIFICATE_ORIGIN],
    })
  }

  async confirm(request: WebhookRequest) {
    const webhookId = this.options.webhookId
    if (!webhookId) {
      reject('paypal has no webhookId')
    }
    const headers = {} as Record<(typeof TRANSMISSION_HEADERS)[number], string>
    for (const name of TRANSMISSION_HEADERS) {
      const value = header(request, name)
      if (!value) {
        reject(`missing ${name} header`)
      }
      headers[name] = value
    }
    const sentAt = Date.parse(headers['paypal-transmission-time'])
    if (Number.isNaN(sentAt)) {
      reject('paypal-transmission-time is not a date')
    }
    const tolerance = (this.options.tolerance ?? 300) * 1000
    if (Math.abs(Date.now() - sentAt) > tolerance) {
      reject('paypal-transmission-time is outside the tolerance')
    }
    const body = jsonObject(request.rawBody)
    if (this.options.verifyWithApi) {
      await this.#verifyWithApi(headers, webhookId, body)
    } else {
      await this.#verifyOffline(headers, webhookId, request.rawBody)
    }
    this.#verified.set(request, body)
  }

  async #verifyOffline(
    headers: Record<(typeof TRANSMISSION_HEADERS)[number], string>,
    webhookId: string,
    rawBody: Buffer
  ) {
    if (headers['paypal-auth-algo'] !== 'SHA256withRSA') {
      reject('paypal-auth-algo is not SHA256withRSA')
    }
    const key = await this.certificates.publicKey(headers['paypal-cert-url'])
    const message = paypalSignedMessage(
      headers['paypal-transmission-id'],
      headers['paypal-transmission-time'],
      webhookId,
      rawBody
    )
    let valid = false
    try {
      valid = createVerify('RSA-SHA256')
        .update(message)
        .verify(key, headers['paypal-transmission-sig'], 'base64')
    } catch {
      valid = false
    }
    if (!valid) {
      reject('paypal-transmission-sig does not match the body')
    }
  }

  async #verifyWithApi(
    headers: Record<(typeof TRANSMISSION_HEADERS)[number], string>,
    webhookId: string,
    event: Record<string, any>
  ) {
    let status: unknown
    try {
      const token = await paypalAccessToken(this.options)
      const response = await fetch(
        `${paypalApiBase(this.options)}/v1/notifications/verify-webhook-signature`,
        {
          method: 'POST',
          headers: {
            'authorization': `Bearer ${token}`,
            'content-type': 'application/json',
            'accept': 'application/json',
          },
          body: JSON.stringify({
            auth_algo: headers['paypal-auth-algo'],
            cert_url: headers['paypal-cert-url'],
            transmission_id: headers['paypal-transmission-id'],
            transmission_sig: headers['paypal-transmission-sig'],
            transmission_time: headers['paypal-transmission-time'],
            webhook_id: webhookId,
            webhook_event: event,
          }),
          signal: AbortSignal.timeout(10_000),
        }
      )
      if (!response.ok) {
        reject(`PayPal verify-webhook-signature answered ${response.status}`)
      }
      status = ((await response.json()) as any)?.verification_status
    } catch (error) {
      if (error instanceof WebhookRejectedException) throw error
      debug('paypal verify-webhook-signature failed: %s', (error as Error)?.message)
      reject('PayPal verify-webhook-signature could not be reached')
    }
    if (status !== 'SUCCESS') {
      reject('PayPal verify-webhook-signature did not confirm the delivery')
    }
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const event = this.#verified.get(request)
    if (!event) {
      reject('PayPal delivery was not verified: call confirm(request) before parse')
    }
    if (!isObject(event.resource)) {
      reject('PayPal event has no resource')
    }
    const type = requiredString(event.event_type, 'event_type')
    return {
      id: requiredString(event.id, 'event id'),
      provider,
      raw: event,
      occurredAt: isoDate(event.create_time),
      ...map(type, event.resource),
    }
  }
}

function money(amount: unknown) {
  if (!isObject(amount)) return {}
  const currency = requiredString(amount.currency_code, 'currency_code').toUpperCase()
  return { amount: toMinorUnits(amount.value, currency), currency }
}

function reference(resource: Record<string, any>) {
  return optionalString(resource.custom_id) ?? optionalString(resource.invoice_id)
}

/** The capture a refund belongs to: its `up` link ends with the capture id */
function captureOfRefund(resource: Record<string, any>) {
  const links = Array.isArray(resource.links) ? resource.links.filter(isObject) : []
  const up = links.find((link) => link.rel === 'up' && typeof link.href === 'string')
  const id = up ? /\/captures\/([^/?#]+)/.exec(up.href)?.[1] : undefined
  return requiredString(id, 'refund capture link')
}

const DISPUTE_OUTCOMES: Record<string, DisputeOutcome> = {
  RESOLVED_SELLER_FAVOUR: 'won',
  DENIED: 'won',
  RESOLVED_BUYER_FAVOUR: 'lost',
  RESOLVED_WITH_PAYOUT: 'lost',
  ACCEPTED: 'lost',
  CANCELED_BY_BUYER: 'canceled',
}

const SUBSCRIPTION_TYPES: Record<string, string> = {
  'BILLING.SUBSCRIPTION.CREATED': 'subscription.created',
  'BILLING.SUBSCRIPTION.ACTIVATED': 'subscription.updated',
  'BILLING.SUBSCRIPTION.UPDATED': 'subscription.updated',
  'BILLING.SUBSCRIPTION.SUSPENDED': 'subscription.updated',
  'BILLING.SUBSCRIPTION.RE-ACTIVATED': 'subscription.updated',
  'BILLING.SUBSCRIPTION.CANCELLED': 'subscription.canceled',
  'BILLING.SUBSCRIPTION.EXPIRED': 'subscription.canceled',
}

function map(type: string, resource: Record<string, any>): { type: string; data: unknown } {
  if (SUBSCRIPTION_TYPES[type]) {
    return {
      type: SUBSCRIPTION_TYPES[type],
      data: {
        subscriptionId: requiredString(resource.id, 'subscription id'),
        customerId: optionalString(resource.subscriber?.payer_id),
        status: optionalString(resource.status)?.toLowerCase() ?? undefined,
        planId: optionalString(resource.plan_id),
        currentPeriodEnd: isoDate(resource.billing_info?.next_billing_time),
        canceledAt: null,
        externalReference: optionalString(resource.custom_id),
      },
    }
  }
  switch (type) {
    case 'PAYMENT.CAPTURE.COMPLETED':
    case 'PAYMENT.CAPTURE.DENIED':
    case 'PAYMENT.CAPTURE.DECLINED': {
      const paid = type === 'PAYMENT.CAPTURE.COMPLETED'
      return {
        type: paid ? 'payment.succeeded' : 'payment.failed',
        data: {
          paymentId: requiredString(resource.id, 'capture id'),
          ...money(resource.amount),
          status: paid ? 'paid' : 'failed',
          paidAt: paid ? isoDate(resource.create_time) : null,
          externalReference: reference(resource),
        },
      }
    }
    case 'PAYMENT.CAPTURE.REFUNDED': {
      const refund = money(resource.amount)
      const total = resource.seller_payable_breakdown?.total_refunded_amount
      // PayPal reports each refund and the capture's running total; a whole refund shows in the total
      return {
        type: 'payment.updated',
        data: {
          paymentId: captureOfRefund(resource),
          currency: refund.currency,
          refunds: [{ id: requiredString(resource.id, 'refund id'), amount: refund.amount ?? 0 }],
          ...(isObject(total) ? { refundedAmount: money(total).amount } : {}),
          externalReference: reference(resource),
        },
      }
    }
    case 'CUSTOMER.DISPUTE.CREATED':
    case 'CUSTOMER.DISPUTE.UPDATED':
    case 'CUSTOMER.DISPUTE.RESOLVED':
      return dispute(type, resource)
    default:
      return { type: passthroughType(type), data: resource }
  }
}

function dispute(type: string, resource: Record<string, any>): { type: string; data: unknown } {
  const transaction = Array.isArray(resource.disputed_transactions)
    ? resource.disputed_transactions.find(isObject)
    : undefined
  const data = {
    disputeId: requiredString(resource.dispute_id, 'dispute_id'),
    paymentId: requiredString(transaction?.seller_transaction_id, 'disputed seller_transaction_id'),
    ...money(resource.dispute_amount),
    reason: optionalString(resource.reason),
    actionableUntil: isoDate(resource.seller_response_due_date),
    externalReference: optionalString(transaction?.custom),
  }
  if (type === 'CUSTOMER.DISPUTE.RESOLVED') {
    const code = optionalString(resource.dispute_outcome?.outcome_code) ?? ''
    return { type: 'payment.dispute_closed', data: { ...data, outcome: DISPUTE_OUTCOMES[code] } }
  }
  // An inquiry is a warning: PayPal holds no money until it becomes a claim or a chargeback
  const inquiry = resource.dispute_life_cycle_stage === 'INQUIRY'
  if (type === 'CUSTOMER.DISPUTE.UPDATED' && inquiry) {
    return { type: passthroughType(type), data }
  }
  return { type: inquiry ? 'payment.dispute_warning' : 'payment.disputed', data }
}
