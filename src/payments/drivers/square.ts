import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { DisputeOutcome, WebhookEvent, WebhookRequest } from '../types.ts'
import {
  header,
  hmacMatches,
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  requiredString,
} from './helpers.ts'

export interface SquareGatewayOptions {
  /** The subscription's signature key (SQUARE_WEBHOOK_SIGNATURE_KEY) */
  signatureKey?: string
  /**
   * The notification URL exactly as registered with Square (SQUARE_WEBHOOK_URL).
   * Square signs it with the body; it is taken from config, never from the
   * request, so a proxy or load balancer in front of the app changes nothing.
   */
  notificationUrl?: string
  /** Access token, used by `payments:webhook --create` (SQUARE_ACCESS_TOKEN) */
  accessToken?: string
  /** Square API base URL for `--create` (default production; sandbox or a stand-in) */
  apiBaseUrl?: string
}

export const SQUARE_EVENTS = [
  'payment.created',
  'payment.updated',
  'refund.created',
  'refund.updated',
  'dispute.created',
  'dispute.state.changed',
  'subscription.created',
  'subscription.updated',
]

/** Dispute states that end a dispute, and how */
const CLOSED_STATES: Record<string, DisputeOutcome> = {
  WON: 'won',
  LOST: 'lost',
  ACCEPTED: 'lost',
  INQUIRY_CLOSED: 'canceled',
}

/**
 * Square: `x-square-hmacsha256-signature` is the base64 HMAC-SHA256 of the
 * notification URL followed by the raw body, keyed with the subscription's
 * signature key. The SDK's `WebhooksHelper.verifySignature` computes the same
 * digest but compares with `===` over a decoded string; this driver compares
 * the raw bytes' digest in constant time. Amounts are in the smallest unit.
 */
export class SquareDriver extends BaseGatewayDriver<SquareGatewayOptions> {
  readonly subscribedEvents = SQUARE_EVENTS
  #url: Buffer

  constructor(options: SquareGatewayOptions = {}) {
    super('square', options)
    this.#url = Buffer.from(options.notificationUrl ?? '')
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    if (!this.options.signatureKey || !this.options.notificationUrl) {
      reject('square needs both signatureKey and notificationUrl')
    }
    const signature = header(request, 'x-square-hmacsha256-signature')
    if (!signature) {
      reject('missing x-square-hmacsha256-signature header')
    }
    const signed = Buffer.concat([this.#url, request.rawBody])
    if (!hmacMatches('sha256', this.options.signatureKey, signed, signature, 'base64')) {
      reject('x-square-hmacsha256-signature does not match the notification URL and body')
    }
    const body = jsonObject(request.rawBody)
    if (!isObject(body.data)) {
      reject('Square event has no data')
    }
    const type = requiredString(body.type, 'event type')
    const object = isObject(body.data.object) ? body.data.object : {}
    return {
      id: requiredString(body.event_id, 'event_id'),
      provider,
      raw: body,
      occurredAt: isoDate(body.created_at),
      ...map(type, object),
    }
  }
}

function money(value: unknown) {
  const amount = isObject(value) ? value : {}
  return {
    amount: integerAmount(amount.amount),
    currency: optionalString(amount.currency) ?? undefined,
  }
}

function nested(object: Record<string, any>, name: string): Record<string, any> {
  if (!isObject(object[name])) {
    reject(`Square event has no data.object.${name}`)
  }
  return object[name]
}

function map(type: string, object: Record<string, any>): { type: string; data: unknown } {
  switch (type) {
    case 'payment.created':
    case 'payment.updated': {
      const payment = nested(object, 'payment')
      const status = String(payment.status ?? '')
      const data = {
        paymentId: requiredString(payment.id, 'payment id'),
        ...money(payment.amount_money),
        customerId: optionalString(payment.customer_id),
        externalReference: optionalString(payment.reference_id),
      }
      if (status === 'COMPLETED') {
        return {
          type: 'payment.succeeded',
          data: { ...data, status: 'paid', paidAt: isoDate(payment.updated_at) },
        }
      }
      if (status === 'FAILED' || status === 'CANCELED') {
        return { type: 'payment.failed', data: { ...data, status: 'failed' } }
      }
      return { type: 'payment.updated', data: { ...data, status: 'pending' } }
    }
    case 'refund.created':
    case 'refund.updated': {
      const refund = nested(object, 'refund')
      const status = String(refund.status ?? '')
      const paymentId = requiredString(refund.payment_id, 'refund payment_id')
      if (status !== 'COMPLETED') {
        // A pending, failed or rejected refund moved no money
        return { type: `refund_${status.toLowerCase() || 'unknown'}`, data: refund }
      }
      const { amount, currency } = money(refund.amount_money)
      return {
        type: 'payment.updated',
        data: {
          paymentId,
          currency,
          // Square reports each refund alone; the processor sums them
          refunds: [{ id: requiredString(refund.id, 'refund id'), amount }],
        },
      }
    }
    case 'dispute.created':
    case 'dispute.state.changed':
    case 'dispute.state.updated': {
      const dispute = nested(object, 'dispute')
      const state = String(dispute.state ?? '')
      const data = {
        disputeId: requiredString(dispute.id ?? dispute.dispute_id, 'dispute id'),
        paymentId: requiredString(dispute.disputed_payment?.payment_id, 'disputed payment id'),
        ...money(dispute.amount_money),
        reason: optionalString(dispute.reason),
        actionableUntil: isoDate(dispute.due_at),
      }
      if (CLOSED_STATES[state]) {
        return {
          type: 'payment.dispute_closed',
          data: { ...data, outcome: CLOSED_STATES[state] },
        }
      }
      if (type !== 'dispute.created') {
        return { type: passthroughType(type), data }
      }
      // An inquiry asks for information before any chargeback
      return {
        type: state.startsWith('INQUIRY_') ? 'payment.dispute_warning' : 'payment.disputed',
        data,
      }
    }
    case 'subscription.created':
    case 'subscription.updated': {
      const subscription = nested(object, 'subscription')
      const status = optionalString(subscription.status) ?? undefined
      const ended = status === 'CANCELED' || status === 'DEACTIVATED'
      return {
        type:
          type === 'subscription.created'
            ? 'subscription.created'
            : ended
              ? 'subscription.canceled'
              : 'subscription.updated',
        data: {
          subscriptionId: requiredString(subscription.id, 'subscription id'),
          customerId: optionalString(subscription.customer_id),
          status,
          planId: optionalString(subscription.plan_variation_id ?? subscription.plan_id),
          currentPeriodEnd: isoDate(subscription.charged_through_date),
          canceledAt: isoDate(subscription.canceled_date),
          externalReference: null,
        },
      }
    }
    default:
      return { type: passthroughType(type), data: object }
  }
}
