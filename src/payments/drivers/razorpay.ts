import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { DisputeOutcome, WebhookEvent, WebhookRequest } from '../types.ts'
import {
  fromUnix,
  header,
  hmacMatches,
  isObject,
  jsonObject,
  optionalString,
  requiredString,
} from './helpers.ts'

export interface RazorpayGatewayOptions {
  /** The secret you set on the webhook in the Dashboard (RAZORPAY_WEBHOOK_SECRET) */
  webhookSecret?: string
}

export const RAZORPAY_EVENTS = [
  'payment.captured',
  'payment.failed',
  'refund.processed',
  'payment.dispute.created',
  'payment.dispute.won',
  'payment.dispute.lost',
  'payment.dispute.closed',
  'subscription.authenticated',
  'subscription.activated',
  'subscription.charged',
  'subscription.updated',
  'subscription.paused',
  'subscription.resumed',
  'subscription.halted',
  'subscription.cancelled',
  'subscription.completed',
]

const SUBSCRIPTION_TYPES: Record<string, string> = {
  'subscription.authenticated': 'subscription.created',
  'subscription.activated': 'subscription.updated',
  'subscription.charged': 'subscription.updated',
  'subscription.updated': 'subscription.updated',
  'subscription.paused': 'subscription.updated',
  'subscription.resumed': 'subscription.updated',
  'subscription.pending': 'subscription.updated',
  'subscription.halted': 'subscription.updated',
  'subscription.cancelled': 'subscription.canceled',
  'subscription.completed': 'subscription.canceled',
}

const DISPUTE_OUTCOMES: Record<string, DisputeOutcome> = {
  'payment.dispute.won': 'won',
  'payment.dispute.lost': 'lost',
  'payment.dispute.closed': 'canceled',
}

/** Your own id, from the `notes` you set on the order, payment or subscription */
function reference(entity: Record<string, any>): string | null {
  const notes = isObject(entity.notes) ? entity.notes : {}
  return (
    optionalString(notes.externalReference) ??
    optionalString(notes.external_reference) ??
    optionalString(entity.receipt)
  )
}

function entityOf(payload: Record<string, any>, name: string): Record<string, any> {
  const entity = payload[name]?.entity
  if (!isObject(entity)) {
    reject(`Razorpay event has no payload.${name}.entity`)
  }
  return entity
}

/**
 * Razorpay: `X-Razorpay-Signature` is the hex HMAC-SHA256 of the raw body
 * keyed with the webhook secret. The SDK's `validateWebhookSignature`
 * computes the same digest but compares it with `===` over a decoded
 * string; this driver compares the raw bytes' digest in constant time.
 * Amounts are already in the currency's subunit (paise).
 */
export class RazorpayDriver extends BaseGatewayDriver<RazorpayGatewayOptions> {
  readonly subscribedEvents = RAZORPAY_EVENTS

  constructor(options: RazorpayGatewayOptions = {}) {
    super('razorpay', options)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    if (!this.options.webhookSecret) {
      reject('razorpay has no webhookSecret')
    }
    const signature = header(request, 'x-razorpay-signature')
    if (!signature) {
      reject('missing X-Razorpay-Signature header')
    }
    if (!hmacMatches('sha256', this.options.webhookSecret, request.rawBody, signature, 'hex')) {
      reject('X-Razorpay-Signature does not match the body')
    }
    const body = jsonObject(request.rawBody)
    if (!isObject(body.payload)) {
      reject('Razorpay event has no payload')
    }
    const type = requiredString(body.event, 'event')
    const mapped = map(type, body.payload)
    // The X-Razorpay-Event-Id header is not signed: a replay could change it at will,
    // so the id comes from the signed body (a retry repeats it byte for byte)
    const eventId = `razorpay:${type}:${mapped.objectId}:${optionalString(body.created_at) ?? '-'}`
    return {
      id: eventId,
      provider,
      raw: body,
      occurredAt: fromUnix(body.created_at),
      type: mapped.type,
      data: mapped.data,
    }
  }
}

function paymentData(payment: Record<string, any>) {
  return {
    paymentId: requiredString(payment.id, 'payment id'),
    amount: integerAmount(payment.amount),
    currency: String(payment.currency ?? '').toUpperCase() || undefined,
    customerId: optionalString(payment.customer_id),
    externalReference: reference(payment),
  }
}

function map(
  type: string,
  payload: Record<string, any>
): { type: string; data: unknown; objectId: string } {
  switch (type) {
    case 'payment.captured':
    case 'payment.failed': {
      const payment = entityOf(payload, 'payment')
      const captured = type === 'payment.captured'
      return {
        type: captured ? 'payment.succeeded' : 'payment.failed',
        objectId: requiredString(payment.id, 'payment id'),
        data: {
          ...paymentData(payment),
          status: captured ? 'paid' : 'failed',
          paidAt: captured ? fromUnix(payment.created_at) : null,
        },
      }
    }
    case 'refund.processed': {
      const refund = entityOf(payload, 'refund')
      const payment = isObject(payload.payment?.entity) ? payload.payment.entity : null
      const refundId = requiredString(refund.id, 'refund id')
      const paymentId = requiredString(refund.payment_id ?? payment?.id, 'refund payment_id')
      const data = {
        paymentId,
        currency: String(refund.currency ?? '').toUpperCase() || undefined,
        externalReference: payment ? reference(payment) : reference(refund),
        // Razorpay reports each refund alone; the processor sums them
        refunds: [{ id: refundId, amount: integerAmount(refund.amount) }],
      }
      if (payment?.refund_status === 'full') {
        return {
          type: 'payment.refunded',
          objectId: refundId,
          data: {
            ...data,
            amount: integerAmount(payment.amount),
            refundedAmount: integerAmount(payment.amount_refunded ?? payment.amount),
          },
        }
      }
      return { type: 'payment.updated', objectId: refundId, data }
    }
    case 'payment.dispute.created':
    case 'payment.dispute.won':
    case 'payment.dispute.lost':
    case 'payment.dispute.closed': {
      const dispute = entityOf(payload, 'dispute')
      const disputeId = requiredString(dispute.id, 'dispute id')
      const data = {
        disputeId,
        paymentId: requiredString(
          dispute.payment_id ?? payload.payment?.entity?.id,
          'dispute payment_id'
        ),
        amount: integerAmount(dispute.amount),
        currency: String(dispute.currency ?? '').toUpperCase() || undefined,
        reason: optionalString(dispute.reason_code),
        actionableUntil: fromUnix(dispute.respond_by),
      }
      if (type !== 'payment.dispute.created') {
        return {
          type: 'payment.dispute_closed',
          objectId: disputeId,
          data: { ...data, outcome: DISPUTE_OUTCOMES[type] },
        }
      }
      // A retrieval request or a fraud alert moves no money yet
      const warning = dispute.phase === 'retrieval' || dispute.phase === 'fraud'
      return {
        type: warning ? 'payment.dispute_warning' : 'payment.disputed',
        objectId: disputeId,
        data,
      }
    }
    default: {
      if (SUBSCRIPTION_TYPES[type]) {
        const subscription = entityOf(payload, 'subscription')
        return {
          type: SUBSCRIPTION_TYPES[type],
          objectId: requiredString(subscription.id, 'subscription id'),
          data: {
            subscriptionId: requiredString(subscription.id, 'subscription id'),
            customerId: optionalString(subscription.customer_id),
            status: optionalString(subscription.status) ?? undefined,
            planId: optionalString(subscription.plan_id),
            currentPeriodEnd: fromUnix(subscription.current_end),
            canceledAt: fromUnix(subscription.ended_at),
            externalReference: reference(subscription),
          },
        }
      }
      const [first] = Object.keys(payload)
      const objectId = optionalString(payload[first]?.entity?.id) ?? '-'
      return { type: passthroughType(type), objectId, data: payload }
    }
  }
}
