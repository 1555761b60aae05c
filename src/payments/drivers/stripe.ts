import Stripe from 'stripe'
import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { DisputeOutcome, WebhookEvent, WebhookRequest } from '../types.ts'
import { fromUnix, header, isObject, optionalString, requiredString } from './helpers.ts'

export interface StripeGatewayOptions {
  /** `whsec_...` signing secret of the endpoint (STRIPE_WEBHOOK_SECRET) */
  webhookSecret?: string
  /** `sk_...` API key, used by `payments:webhook --create` (STRIPE_SECRET_KEY) */
  apiKey?: string
  /** Seconds a signature stays valid (Stripe's default: 300) */
  tolerance?: number
  /** Overrides for the SDK's API host, for tests and proxies */
  api?: { host?: string; port?: number; protocol?: 'http' | 'https' }
}

export const STRIPE_EVENTS = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'checkout.session.completed',
  'charge.refunded',
  'charge.dispute.created',
  'charge.dispute.closed',
  'radar.early_fraud_warning.created',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
]

const DISPUTE_OUTCOMES: Record<string, DisputeOutcome> = {
  won: 'won',
  lost: 'lost',
  warning_closed: 'canceled',
  prevented: 'canceled',
}

function reference(object: Record<string, any>): string | null {
  const metadata = isObject(object.metadata) ? object.metadata : {}
  return (
    optionalString(metadata.externalReference) ??
    optionalString(metadata.external_reference) ??
    optionalString(object.client_reference_id)
  )
}

/**
 * Stripe: `Stripe-Signature` checked by the SDK's
 * `webhooks.constructEvent` against the raw bytes.
 */
export class StripeDriver extends BaseGatewayDriver<StripeGatewayOptions> {
  readonly subscribedEvents = STRIPE_EVENTS
  readonly client: Stripe

  constructor(options: StripeGatewayOptions) {
    super('stripe', options)
    this.client = new Stripe(options.apiKey || 'sk_unused_by_webhooks', {
      ...options.api,
      maxNetworkRetries: 0,
    })
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const signature = header(request, 'stripe-signature')
    if (!this.options.webhookSecret) {
      reject('stripe has no webhookSecret')
    }
    if (!signature) {
      reject('missing Stripe-Signature header')
    }
    let event: Record<string, any>
    try {
      event = this.client.webhooks.constructEvent(
        request.rawBody,
        signature,
        this.options.webhookSecret,
        this.options.tolerance
      ) as unknown as Record<string, any>
    } catch (error) {
      reject(`Stripe signature check failed: ${(error as Error).message.split('\n')[0]}`)
    }
    if (!isObject(event) || !isObject(event.data) || !isObject(event.data.object)) {
      reject('Stripe event has no data.object')
    }
    const id = requiredString(event.id, 'event id')
    const type = requiredString(event.type, 'event type')
    return {
      id,
      provider,
      raw: event,
      occurredAt: fromUnix(event.created),
      ...map(type, event.data.object),
    }
  }
}

function map(type: string, object: Record<string, any>): { type: string; data: unknown } {
  switch (type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed': {
      const amount = integerAmount(object.amount_received || object.amount)
      return {
        type: type === 'payment_intent.succeeded' ? 'payment.succeeded' : 'payment.failed',
        data: {
          paymentId: requiredString(object.id, 'payment intent id'),
          amount,
          currency: String(object.currency ?? '').toUpperCase() || undefined,
          status: type === 'payment_intent.succeeded' ? 'paid' : 'failed',
          paidAt: null,
          customerId: optionalString(object.customer),
          externalReference: reference(object),
        },
      }
    }
    case 'checkout.session.completed': {
      if (object.payment_status !== 'paid' || !object.payment_intent) {
        return { type, data: object }
      }
      return {
        type: 'payment.succeeded',
        data: {
          paymentId: requiredString(object.payment_intent, 'payment_intent'),
          amount: integerAmount(object.amount_total),
          currency: String(object.currency ?? '').toUpperCase() || undefined,
          status: 'paid',
          customerId: optionalString(object.customer),
          externalReference: reference(object),
        },
      }
    }
    case 'charge.refunded': {
      const paymentId = requiredString(object.payment_intent ?? object.id, 'charge id')
      const amount = integerAmount(object.amount)
      const refunded = integerAmount(object.amount_refunded)
      const whole = object.refunded === true || refunded >= amount
      return {
        type: whole ? 'payment.refunded' : 'payment.updated',
        data: {
          paymentId,
          amount,
          currency: String(object.currency ?? '').toUpperCase() || undefined,
          refundedAmount: refunded,
          // Stripe reports the cumulative refunded amount on the charge
          refunds: [{ id: `${paymentId}:cumulative`, amount: refunded }],
          externalReference: reference(object),
        },
      }
    }
    case 'charge.dispute.created':
    case 'charge.dispute.updated':
    case 'charge.dispute.closed': {
      const status = String(object.status ?? '')
      const inquiry = status.startsWith('warning_')
      const data = {
        disputeId: requiredString(object.id, 'dispute id'),
        paymentId: requiredString(object.payment_intent ?? object.charge, 'dispute charge'),
        amount: integerAmount(object.amount),
        currency: String(object.currency ?? '').toUpperCase() || undefined,
        reason: optionalString(object.reason),
        actionableUntil: fromUnix(object.evidence_details?.due_by),
        externalReference: reference(object),
      }
      if (type === 'charge.dispute.closed') {
        return {
          type: 'payment.dispute_closed',
          data: { ...data, outcome: DISPUTE_OUTCOMES[status] },
        }
      }
      if (type === 'charge.dispute.updated') {
        return { type, data }
      }
      return { type: inquiry ? 'payment.dispute_warning' : 'payment.disputed', data }
    }
    case 'radar.early_fraud_warning.created':
      return {
        type: 'payment.dispute_warning',
        data: {
          disputeId: requiredString(object.id, 'early fraud warning id'),
          paymentId: requiredString(object.payment_intent ?? object.charge, 'warning charge'),
          reason: optionalString(object.fraud_type),
          actionableUntil: null,
        },
      }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const price = object.items?.data?.[0]?.price
      return {
        type:
          type === 'customer.subscription.created'
            ? 'subscription.created'
            : type === 'customer.subscription.updated'
              ? 'subscription.updated'
              : 'subscription.canceled',
        data: {
          subscriptionId: requiredString(object.id, 'subscription id'),
          customerId: optionalString(object.customer),
          status:
            type === 'customer.subscription.deleted'
              ? 'canceled'
              : (optionalString(object.status) ?? undefined),
          planId: optionalString(price?.id ?? object.plan?.id),
          currentPeriodEnd: fromUnix(
            object.current_period_end ?? object.items?.data?.[0]?.current_period_end
          ),
          canceledAt: fromUnix(object.canceled_at),
          externalReference: reference(object),
        },
      }
    }
    default:
      return { type: passthroughType(type), data: object }
  }
}
