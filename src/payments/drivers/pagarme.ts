import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import {
  header,
  hmacMatches,
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  requiredString,
} from './helpers.ts'

export interface PagarmeGatewayOptions {
  /** The account's secret key (`sk_...`), which keys `X-Hub-Signature` (PAGARME_SECRET_KEY) */
  secretKey?: string
}

export const PAGARME_EVENTS = [
  'charge.paid',
  'charge.payment_failed',
  'charge.refunded',
  'charge.partial_canceled',
  'charge.chargedback',
  'charge.pending',
  'charge.underpaid',
  'subscription.created',
  'subscription.canceled',
]

/** Your own id: the charge's or order's `code`, else `metadata.externalReference` */
function reference(object: Record<string, any>): string | null {
  const metadata = isObject(object.metadata) ? object.metadata : {}
  return (
    optionalString(metadata.externalReference) ??
    optionalString(metadata.external_reference) ??
    optionalString(object.code) ??
    optionalString(object.order?.code)
  )
}

/**
 * Pagar.me (API v5): `X-Hub-Signature` is `sha1=` and the hex HMAC-SHA1 of
 * the raw body keyed with the account's secret key. A delivery is one event
 * (`{ id: "hook_…", type, data }`) whose `data` is the charge, order or
 * subscription; amounts are already in cents.
 */
export class PagarmeDriver extends BaseGatewayDriver<PagarmeGatewayOptions> {
  readonly subscribedEvents = PAGARME_EVENTS

  constructor(options: PagarmeGatewayOptions = {}) {
    super('pagarme', options)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    if (!this.options.secretKey) {
      reject('pagarme has no secretKey')
    }
    const signature = header(request, 'x-hub-signature')
    if (!signature) {
      reject('missing X-Hub-Signature header')
    }
    const [algorithm, digest] = signature.split('=', 2)
    if (algorithm !== 'sha1' || !digest) {
      reject('X-Hub-Signature is not "sha1=<hex>"')
    }
    if (!hmacMatches('sha1', this.options.secretKey, request.rawBody, digest, 'hex')) {
      reject('X-Hub-Signature does not match the body')
    }
    const body = jsonObject(request.rawBody)
    if (!isObject(body.data)) {
      reject('Pagar.me delivery has no data object')
    }
    return {
      id: requiredString(body.id, 'hook id'),
      provider,
      raw: body,
      occurredAt: isoDate(body.created_at),
      ...map(requiredString(body.type, 'event type'), body.data),
    }
  }
}

function charge(object: Record<string, any>) {
  return {
    paymentId: requiredString(object.id, 'charge id'),
    amount: integerAmount(object.amount),
    currency: String(object.currency ?? 'BRL').toUpperCase(),
    customerId: optionalString(object.customer?.id),
    externalReference: reference(object),
  }
}

function map(type: string, object: Record<string, any>): { type: string; data: unknown } {
  switch (type) {
    case 'charge.paid':
      return {
        type: 'payment.succeeded',
        data: { ...charge(object), status: 'paid', paidAt: isoDate(object.paid_at) },
      }
    case 'charge.payment_failed':
      return { type: 'payment.failed', data: { ...charge(object), status: 'failed' } }
    case 'charge.pending':
    case 'charge.underpaid':
      return { type: 'payment.updated', data: { ...charge(object), status: 'pending' } }
    case 'charge.refunded':
    case 'charge.partial_canceled': {
      const data = charge(object)
      const refunded = integerAmount(object.canceled_amount ?? object.amount)
      const whole = type === 'charge.refunded' || refunded >= data.amount
      return {
        type: whole ? 'payment.refunded' : 'payment.updated',
        data: {
          ...data,
          refundedAmount: refunded,
          // Pagar.me reports the cumulative canceled amount on the charge
          refunds: [{ id: `${data.paymentId}:cumulative`, amount: refunded }],
        },
      }
    }
    case 'charge.chargedback': {
      const data = charge(object)
      return {
        type: 'payment.disputed',
        data: {
          disputeId: `${data.paymentId}:chargeback`,
          paymentId: data.paymentId,
          amount: data.amount,
          currency: data.currency,
          reason: optionalString(object.last_transaction?.gateway_response?.code),
          actionableUntil: null,
          externalReference: data.externalReference,
        },
      }
    }
    case 'subscription.created':
    case 'subscription.updated':
    case 'subscription.canceled':
      return {
        type,
        data: {
          subscriptionId: requiredString(object.id, 'subscription id'),
          customerId: optionalString(object.customer?.id),
          status: optionalString(object.status) ?? undefined,
          planId: optionalString(object.plan?.id),
          currentPeriodEnd: isoDate(object.current_cycle?.end_at ?? object.next_billing_at),
          canceledAt: isoDate(object.canceled_at),
          externalReference: reference(object),
        },
      }
    default:
      return { type: passthroughType(type), data: object }
  }
}
