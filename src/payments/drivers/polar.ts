import { Webhook } from 'standardwebhooks'
import { BaseGatewayDriver } from './base_driver.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import { isObject, isoDate, optionalString, requiredString } from './helpers.ts'
import { standardWebhookEvent } from './standard_webhooks.ts'

export interface PolarGatewayOptions {
  /** The endpoint's secret as Polar shows it (POLAR_WEBHOOK_SECRET) */
  webhookSecret?: string
  /** Organization access token, used by `payments:webhook --create` (POLAR_ACCESS_TOKEN) */
  accessToken?: string
  /** Use Polar's sandbox API for `--create` */
  sandbox?: boolean
  /** Base URL of Polar's API for `--create`, for tests and proxies */
  apiBaseUrl?: string
}

export const POLAR_EVENTS = [
  'order.paid',
  'order.refunded',
  'refund.created',
  'refund.updated',
  'subscription.created',
  'subscription.updated',
  'subscription.active',
  'subscription.canceled',
  'subscription.revoked',
]

/**
 * Polar's secret is used as its UTF-8 bytes: Polar's own SDK base64-encodes
 * the secret string before handing it to `standardwebhooks`, which decodes it.
 */
export function polarWebhook(secret: string) {
  return new Webhook(Buffer.from(secret, 'utf8').toString('base64'))
}

const SUBSCRIPTION_TYPES: Record<string, string> = {
  'subscription.created': 'subscription.created',
  'subscription.updated': 'subscription.updated',
  'subscription.active': 'subscription.updated',
  'subscription.uncanceled': 'subscription.updated',
  'subscription.past_due': 'subscription.updated',
  // `canceled` is a scheduled cancellation; `revoked` ends access now
  'subscription.canceled': 'subscription.updated',
  'subscription.revoked': 'subscription.canceled',
}

function reference(object: Record<string, any>): string | null {
  const metadata = isObject(object.metadata) ? object.metadata : {}
  return (
    optionalString(metadata.externalReference) ??
    optionalString(metadata.external_reference) ??
    optionalString(object.customer?.external_id)
  )
}

/**
 * Polar: Standard Webhooks, verified by the `standardwebhooks` package with
 * Polar's secret encoding. The event id is `webhook-id`, the same on every
 * retry of one message.
 */
export class PolarDriver extends BaseGatewayDriver<PolarGatewayOptions> {
  readonly subscribedEvents = POLAR_EVENTS
  #webhook?: Webhook

  constructor(options: PolarGatewayOptions) {
    super('polar', options)
    if (options.webhookSecret) {
      this.#webhook = polarWebhook(options.webhookSecret)
    }
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    return standardWebhookEvent(
      this.#webhook,
      request,
      provider,
      { name: 'Polar', driver: 'polar' },
      map
    )
  }
}

function currencyOf(object: Record<string, any>) {
  return optionalString(object.currency)?.toUpperCase() ?? undefined
}

function map(type: string, object: Record<string, any>): { type: string; data: unknown } {
  if (SUBSCRIPTION_TYPES[type]) {
    const canonical = SUBSCRIPTION_TYPES[type]
    return {
      type: canonical,
      data: {
        subscriptionId: requiredString(object.id, 'subscription id'),
        customerId: optionalString(object.customer_id),
        status: optionalString(object.status) ?? undefined,
        planId: optionalString(object.product_id),
        currentPeriodEnd: isoDate(object.current_period_end),
        canceledAt: isoDate(object.canceled_at ?? object.ended_at),
        externalReference: reference(object),
      },
    }
  }
  switch (type) {
    case 'order.paid':
      return {
        type: 'payment.succeeded',
        data: {
          paymentId: requiredString(object.id, 'order id'),
          amount: integerAmount(object.total_amount ?? object.amount),
          currency: currencyOf(object),
          status: 'paid',
          paidAt: isoDate(object.modified_at ?? object.created_at),
          customerId: optionalString(object.customer_id),
          externalReference: reference(object),
        },
      }
    case 'order.refunded': {
      const paymentId = requiredString(object.id, 'order id')
      const total = integerAmount(object.total_amount ?? object.amount)
      const refunded = integerAmount(object.refunded_amount ?? 0)
      // The order carries the cumulative refunded amount; each refund also arrives as refund.*
      return {
        type:
          object.status === 'refunded' || refunded >= total
            ? 'payment.refunded'
            : 'payment.updated',
        data: {
          paymentId,
          amount: total,
          currency: currencyOf(object),
          refundedAmount: refunded,
          externalReference: reference(object),
        },
      }
    }
    case 'refund.created':
    case 'refund.updated': {
      if (object.status !== 'succeeded') {
        return { type: passthroughType(type), data: object }
      }
      return {
        type: 'payment.updated',
        data: {
          paymentId: requiredString(object.order_id, 'refund order_id'),
          currency: currencyOf(object),
          refunds: [
            { id: requiredString(object.id, 'refund id'), amount: integerAmount(object.amount) },
          ],
          externalReference: reference(object),
        },
      }
    }
    default:
      return { type: passthroughType(type), data: object }
  }
}
