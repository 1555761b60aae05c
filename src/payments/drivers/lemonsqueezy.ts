import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { PaymentWebhookData, WebhookEvent, WebhookRequest } from '../types.ts'
import {
  header,
  hmacMatches,
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  requiredString,
} from './helpers.ts'

export interface LemonSqueezyGatewayOptions {
  /** The signing secret you gave the webhook (LEMONSQUEEZY_WEBHOOK_SECRET) */
  signingSecret?: string
  /** API key, used by `payments:webhook --create` (LEMONSQUEEZY_API_KEY) */
  apiKey?: string
  /** The store the webhook is created in by `payments:webhook --create` (LEMONSQUEEZY_STORE_ID) */
  storeId?: string
  /** Base URL of Lemon Squeezy's API (default `https://api.lemonsqueezy.com`), for tests and proxies */
  apiBaseUrl?: string
}

export const LEMONSQUEEZY_EVENTS = [
  'order_created',
  'order_refunded',
  'subscription_created',
  'subscription_updated',
  'subscription_cancelled',
  'subscription_resumed',
  'subscription_expired',
  'subscription_paused',
  'subscription_unpaused',
  'subscription_payment_success',
  'subscription_payment_failed',
  'subscription_payment_recovered',
  'subscription_payment_refunded',
]

const SUBSCRIPTION_EVENTS: Record<string, 'subscription.created' | 'subscription.updated'> = {
  subscription_created: 'subscription.created',
  subscription_updated: 'subscription.updated',
  subscription_resumed: 'subscription.updated',
  subscription_expired: 'subscription.updated',
  subscription_paused: 'subscription.updated',
  subscription_unpaused: 'subscription.updated',
}

/**
 * Your own id, from the checkout's `custom` data Lemon Squeezy echoes in
 * `meta.custom_data`.
 */
function reference(meta: Record<string, any>): string | null {
  const custom = isObject(meta.custom_data) ? meta.custom_data : {}
  return (
    optionalString(custom.externalReference) ??
    optionalString(custom.external_reference) ??
    optionalString(custom.order_id)
  )
}

/**
 * Lemon Squeezy: `X-Signature` is the hex HMAC-SHA256 of the raw body keyed
 * with the webhook's signing secret. Orders and subscription invoices are
 * payments (amounts already in cents); subscriptions are subscriptions.
 */
export class LemonSqueezyDriver extends BaseGatewayDriver<LemonSqueezyGatewayOptions> {
  readonly subscribedEvents = LEMONSQUEEZY_EVENTS

  constructor(options: LemonSqueezyGatewayOptions = {}) {
    super('lemonsqueezy', options)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    if (!this.options.signingSecret) {
      reject('lemonsqueezy has no signingSecret')
    }
    const signature = header(request, 'x-signature')
    if (!signature) {
      reject('missing X-Signature header')
    }
    if (!hmacMatches('sha256', this.options.signingSecret, request.rawBody, signature, 'hex')) {
      reject('X-Signature does not match the body')
    }
    const body = jsonObject(request.rawBody)
    if (!isObject(body.meta) || !isObject(body.data) || !isObject(body.data.attributes)) {
      reject('Lemon Squeezy delivery has no meta, data or data.attributes')
    }
    const name = requiredString(body.meta.event_name, 'meta.event_name')
    const objectId = requiredString(body.data.id, 'data.id')
    const attributes = body.data.attributes
    const version = optionalString(attributes.updated_at) ?? optionalString(attributes.created_at)
    return {
      // Lemon Squeezy sends no event id; a redelivery repeats the object's state
      id: `lemonsqueezy:${name}:${objectId}:${version ?? '-'}`,
      provider,
      raw: body,
      occurredAt: isoDate(attributes.updated_at ?? attributes.created_at),
      ...map(name, objectId, attributes, reference(body.meta)),
    }
  }
}

function payment(
  objectId: string,
  attributes: Record<string, any>,
  externalReference: string | null
): PaymentWebhookData {
  return {
    // A subscription invoice is its own payment, as an order is
    paymentId: objectId,
    amount: integerAmount(attributes.total),
    currency: String(attributes.currency ?? '').toUpperCase() || undefined,
    customerId: optionalString(attributes.customer_id),
    externalReference,
  }
}

function map(
  name: string,
  objectId: string,
  attributes: Record<string, any>,
  externalReference: string | null
): { type: string; data: unknown } {
  switch (name) {
    case 'order_created':
    case 'subscription_payment_success':
    case 'subscription_payment_recovered':
    case 'subscription_payment_failed': {
      const status = String(attributes.status ?? '')
      const data = payment(objectId, attributes, externalReference)
      if (status === 'paid') {
        return {
          type: 'payment.succeeded',
          data: { ...data, status: 'paid', paidAt: isoDate(attributes.created_at) },
        }
      }
      if (status === 'failed' || name === 'subscription_payment_failed') {
        return { type: 'payment.failed', data: { ...data, status: 'failed' } }
      }
      return { type: 'payment.updated', data: { ...data, status: 'pending' } }
    }
    case 'order_refunded':
    case 'subscription_payment_refunded': {
      const data = payment(objectId, attributes, externalReference)
      const refunded = integerAmount(attributes.refunded_amount ?? attributes.total)
      const whole = attributes.status === 'refunded' || refunded >= data.amount!
      return {
        type: whole ? 'payment.refunded' : 'payment.updated',
        data: {
          ...data,
          refundedAmount: refunded,
          // Lemon Squeezy reports the cumulative refunded amount
          refunds: [{ id: `${objectId}:cumulative`, amount: refunded }],
        },
      }
    }
    case 'subscription_cancelled':
    case 'subscription_created':
    case 'subscription_updated':
    case 'subscription_resumed':
    case 'subscription_expired':
    case 'subscription_paused':
    case 'subscription_unpaused':
      return {
        type: SUBSCRIPTION_EVENTS[name] ?? 'subscription.canceled',
        data: {
          subscriptionId: objectId,
          customerId: optionalString(attributes.customer_id),
          status: optionalString(attributes.status) ?? undefined,
          planId: optionalString(attributes.variant_id),
          currentPeriodEnd: isoDate(attributes.renews_at ?? attributes.ends_at),
          canceledAt:
            name === 'subscription_cancelled'
              ? isoDate(attributes.updated_at)
              : isoDate(attributes.cancelled ? attributes.updated_at : null),
          externalReference,
        },
      }
    default:
      return { type: passthroughType(name), data: attributes }
  }
}
