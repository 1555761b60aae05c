import { createHmac } from 'node:crypto'
import { Paddle } from '@paddle/paddle-node-sdk'
import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { DisputeOutcome, WebhookEvent, WebhookRequest } from '../types.ts'
import {
  header,
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  requiredString,
  safeCompare,
} from './helpers.ts'

export interface PaddleGatewayOptions {
  /** The notification destination's secret key, `pdl_ntfset_...` (PADDLE_WEBHOOK_SECRET) */
  webhookSecret?: string
  /** API key, used by `payments:webhook --create` (PADDLE_API_KEY) */
  apiKey?: string
  /** Use Paddle's sandbox API for `--create` */
  sandbox?: boolean
  /** Base URL of Paddle's API for `--create`, for tests and proxies */
  apiBaseUrl?: string
}

export const PADDLE_EVENTS = [
  'transaction.completed',
  'transaction.payment_failed',
  'adjustment.created',
  'adjustment.updated',
  'subscription.created',
  'subscription.updated',
  'subscription.canceled',
]

const SUBSCRIPTION_TYPES: Record<string, string> = {
  'subscription.created': 'subscription.created',
  'subscription.activated': 'subscription.updated',
  'subscription.updated': 'subscription.updated',
  'subscription.paused': 'subscription.updated',
  'subscription.resumed': 'subscription.updated',
  'subscription.past_due': 'subscription.updated',
  'subscription.trialing': 'subscription.updated',
  'subscription.canceled': 'subscription.canceled',
}

/** The part of `Paddle-Signature` Atrium reads: `ts=<unix>;h1=<hex>` */
function signatureParts(value: string) {
  const parts = new Map<string, string>()
  for (const part of value.split(';')) {
    const index = part.indexOf('=')
    if (index > 0) parts.set(part.slice(0, index).trim(), part.slice(index + 1).trim())
  }
  const ts = parts.get('ts')
  const h1 = parts.get('h1')
  if (!ts || !/^\d{1,12}$/.test(ts) || !h1) {
    reject('Paddle-Signature is not "ts=<unix>;h1=<hex>"')
  }
  return { ts, h1 }
}

function reference(object: Record<string, any>): string | null {
  const custom = isObject(object.custom_data) ? object.custom_data : {}
  return (
    optionalString(custom.externalReference) ??
    optionalString(custom.external_reference) ??
    optionalString(custom.orderId)
  )
}

/**
 * Paddle Billing: `Paddle-Signature: ts=...;h1=...` is the hex HMAC-SHA256 of
 * `<ts>:<raw body>` keyed with the destination's secret. The driver compares
 * it in constant time against the raw bytes, then has the SDK's
 * `webhooks.isSignatureValid` check it again with the SDK's own tolerance (it
 * rejects a signature older than 5 seconds), so nothing the SDK would refuse
 * is recorded.
 */
export class PaddleDriver extends BaseGatewayDriver<PaddleGatewayOptions> {
  readonly subscribedEvents = PADDLE_EVENTS
  readonly client: Paddle
  #verified = new WeakMap<WebhookRequest, Record<string, any>>()

  constructor(options: PaddleGatewayOptions) {
    super('paddle', options)
    this.client = new Paddle(options.apiKey || 'unused_by_webhooks')
  }

  async confirm(request: WebhookRequest) {
    const secret = this.options.webhookSecret
    if (!secret) {
      reject('paddle has no webhookSecret')
    }
    const signature = header(request, 'paddle-signature')
    if (!signature) {
      reject('missing Paddle-Signature header')
    }
    const { ts, h1 } = signatureParts(signature)
    const expected = createHmac('sha256', secret)
      .update(`${ts}:`)
      .update(request.rawBody)
      .digest('hex')
    if (!safeCompare(expected, h1.toLowerCase())) {
      reject('Paddle-Signature does not match the body')
    }
    // The bytes match, so a refusal by the SDK is its timestamp tolerance
    const accepted = await this.client.webhooks
      .isSignatureValid(request.rawBody.toString('utf8'), secret, signature)
      .catch(() => false)
    if (!accepted) {
      reject('Paddle-Signature timestamp is outside the SDK tolerance (5 seconds)')
    }
    this.#verified.set(request, jsonObject(request.rawBody))
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const event = this.#verified.get(request)
    if (!event) {
      reject('Paddle delivery was not verified: call confirm(request) before parse')
    }
    if (!isObject(event.data)) {
      reject('Paddle event has no data')
    }
    const type = requiredString(event.event_type, 'event_type')
    return {
      id: requiredString(event.event_id, 'event_id'),
      provider,
      raw: event,
      occurredAt: isoDate(event.occurred_at),
      ...map(type, event.data),
    }
  }
}

function currencyOf(object: Record<string, any>) {
  return optionalString(object.currency_code)?.toUpperCase() ?? undefined
}

function map(type: string, object: Record<string, any>): { type: string; data: unknown } {
  if (SUBSCRIPTION_TYPES[type]) {
    const canonical = SUBSCRIPTION_TYPES[type]
    return {
      type: canonical,
      data: {
        subscriptionId: requiredString(object.id, 'subscription id'),
        customerId: optionalString(object.customer_id),
        status: canonical === 'subscription.canceled' ? 'canceled' : optionalString(object.status),
        planId: optionalString(object.items?.[0]?.price?.id),
        currentPeriodEnd: isoDate(object.current_billing_period?.ends_at),
        canceledAt: isoDate(object.canceled_at),
        externalReference: reference(object),
      },
    }
  }
  switch (type) {
    case 'transaction.completed':
    case 'transaction.payment_failed': {
      const completed = type === 'transaction.completed'
      const totals = object.details?.totals ?? {}
      return {
        type: completed ? 'payment.succeeded' : 'payment.failed',
        data: {
          paymentId: requiredString(object.id, 'transaction id'),
          amount: integerAmount(totals.grand_total ?? totals.total),
          currency: currencyOf(object),
          status: completed ? 'paid' : 'failed',
          paidAt: completed ? isoDate(object.billed_at ?? object.updated_at) : null,
          customerId: optionalString(object.customer_id),
          externalReference: reference(object),
        },
      }
    }
    case 'adjustment.created':
    case 'adjustment.updated':
      return adjustment(type, object)
    default:
      return { type: passthroughType(type), data: object }
  }
}

const CHARGEBACK_OUTCOMES: Record<string, DisputeOutcome> = {
  chargeback_reverse: 'won',
}

/**
 * Refunds and chargebacks are adjustments of a transaction; a refund counts
 * once Paddle approves it.
 */
function adjustment(type: string, object: Record<string, any>): { type: string; data: unknown } {
  const action = optionalString(object.action) ?? ''
  const status = optionalString(object.status) ?? ''
  const paymentId = requiredString(object.transaction_id, 'adjustment transaction_id')
  const adjustmentId = requiredString(object.id, 'adjustment id')
  const amount = integerAmount(object.totals?.total ?? 0)
  const currency = optionalString(object.totals?.currency_code ?? object.currency_code)
  if (action === 'refund' && status === 'approved') {
    return {
      type: object.type === 'full' ? 'payment.refunded' : 'payment.updated',
      data: {
        paymentId,
        currency: currency ?? undefined,
        refunds: [{ id: adjustmentId, amount }],
        customerId: optionalString(object.customer_id),
      },
    }
  }
  const dispute = {
    disputeId: `${paymentId}:chargeback`,
    paymentId,
    amount,
    currency: currency ?? undefined,
    reason: optionalString(object.reason),
    actionableUntil: null,
  }
  if (action === 'chargeback') {
    return { type: 'payment.disputed', data: dispute }
  }
  if (action === 'chargeback_warning') {
    return { type: 'payment.dispute_warning', data: dispute }
  }
  if (CHARGEBACK_OUTCOMES[action]) {
    return {
      type: 'payment.dispute_closed',
      data: { ...dispute, outcome: CHARGEBACK_OUTCOMES[action] },
    }
  }
  return { type: passthroughType(type), data: object }
}
