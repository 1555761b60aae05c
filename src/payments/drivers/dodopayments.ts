import { Webhook } from 'standardwebhooks'
import { BaseGatewayDriver } from './base_driver.ts'
import { PaymentsConfigException } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { DisputeOutcome, WebhookEvent, WebhookRequest } from '../types.ts'
import { isObject, isoDate, optionalString, requiredString } from './helpers.ts'
import { standardWebhookEvent } from './standard_webhooks.ts'

export interface DodoPaymentsGatewayOptions {
  /** The endpoint's `whsec_...` secret key (DODO_PAYMENTS_WEBHOOK_KEY) */
  webhookSecret?: string
  /** API key, used by `payments:webhook --create` (DODO_PAYMENTS_API_KEY) */
  apiKey?: string
  /** Use Dodo Payments' test mode API for `--create` */
  testMode?: boolean
  /** Base URL of Dodo Payments' API for `--create`, for tests and proxies */
  apiBaseUrl?: string
}

export const DODO_PAYMENTS_EVENTS = [
  'payment.succeeded',
  'payment.failed',
  'payment.cancelled',
  'refund.succeeded',
  'dispute.opened',
  'dispute.won',
  'dispute.lost',
  'dispute.expired',
  'dispute.accepted',
  'dispute.cancelled',
  'subscription.active',
  'subscription.renewed',
  'subscription.on_hold',
  'subscription.plan_changed',
  'subscription.cancelled',
  'subscription.expired',
]

const SUBSCRIPTION_TYPES: Record<string, string> = {
  'subscription.active': 'subscription.created',
  'subscription.renewed': 'subscription.updated',
  'subscription.on_hold': 'subscription.updated',
  'subscription.plan_changed': 'subscription.updated',
  'subscription.failed': 'subscription.updated',
  'subscription.cancelled': 'subscription.canceled',
  'subscription.expired': 'subscription.canceled',
}

const DISPUTE_OUTCOMES: Record<string, DisputeOutcome> = {
  'dispute.won': 'won',
  'dispute.lost': 'lost',
  'dispute.accepted': 'lost',
  'dispute.expired': 'expired',
  'dispute.cancelled': 'canceled',
}

function reference(object: Record<string, any>): string | null {
  const metadata = isObject(object.metadata) ? object.metadata : {}
  return optionalString(metadata.externalReference) ?? optionalString(metadata.external_reference)
}

/**
 * Dodo Payments: Standard Webhooks, verified by the `standardwebhooks`
 * package with the `whsec_` key. The event id is `webhook-id`, the same on
 * every retry of one message.
 */
export class DodoPaymentsDriver extends BaseGatewayDriver<DodoPaymentsGatewayOptions> {
  readonly subscribedEvents = DODO_PAYMENTS_EVENTS
  #webhook?: Webhook

  constructor(options: DodoPaymentsGatewayOptions) {
    super('dodopayments', options)
    if (options.webhookSecret) {
      try {
        this.#webhook = new Webhook(options.webhookSecret)
      } catch {
        throw new PaymentsConfigException(
          'Invalid "webhookSecret" for dodopayments in config/payments.ts: expected the whsec_ key from the Dodo Payments dashboard (DODO_PAYMENTS_WEBHOOK_KEY)'
        )
      }
    }
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    return standardWebhookEvent(
      this.#webhook,
      request,
      provider,
      { name: 'Dodo Payments', driver: 'dodopayments' },
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
        subscriptionId: requiredString(object.subscription_id, 'subscription_id'),
        customerId: optionalString(object.customer?.customer_id),
        status: optionalString(object.status) ?? undefined,
        planId: optionalString(object.product_id),
        currentPeriodEnd: isoDate(object.next_billing_date),
        canceledAt: isoDate(object.cancelled_at),
        externalReference: reference(object),
      },
    }
  }
  switch (type) {
    case 'payment.succeeded':
    case 'payment.failed':
    case 'payment.cancelled': {
      const paid = type === 'payment.succeeded'
      return {
        type: paid ? 'payment.succeeded' : 'payment.failed',
        data: {
          paymentId: requiredString(object.payment_id, 'payment_id'),
          amount: integerAmount(object.total_amount),
          currency: currencyOf(object),
          status: paid ? 'paid' : 'failed',
          paidAt: paid ? isoDate(object.created_at) : null,
          customerId: optionalString(object.customer?.customer_id),
          externalReference: reference(object),
        },
      }
    }
    case 'refund.succeeded':
      // Dodo Payments reports each refund alone; the processor sums them
      return {
        type: 'payment.updated',
        data: {
          paymentId: requiredString(object.payment_id, 'refund payment_id'),
          currency: currencyOf(object),
          refunds: [
            {
              id: requiredString(object.refund_id, 'refund_id'),
              amount: integerAmount(object.amount),
            },
          ],
          externalReference: reference(object),
        },
      }
    default:
      if (type.startsWith('dispute.')) {
        return dispute(type, object)
      }
      return { type: passthroughType(type), data: object }
  }
}

function dispute(type: string, object: Record<string, any>): { type: string; data: unknown } {
  const data = {
    disputeId: requiredString(object.dispute_id, 'dispute_id'),
    paymentId: requiredString(object.payment_id, 'dispute payment_id'),
    amount: object.amount === undefined ? undefined : integerAmount(object.amount),
    currency: currencyOf(object),
    reason: optionalString(object.remarks ?? object.reason),
    actionableUntil: null,
  }
  if (type === 'dispute.opened') {
    // A pre-dispute is an inquiry: no money has moved yet
    const warning = object.dispute_stage === 'pre_dispute'
    return { type: warning ? 'payment.dispute_warning' : 'payment.disputed', data }
  }
  if (DISPUTE_OUTCOMES[type]) {
    return { type: 'payment.dispute_closed', data: { ...data, outcome: DISPUTE_OUTCOMES[type] } }
  }
  return { type: passthroughType(type), data }
}
