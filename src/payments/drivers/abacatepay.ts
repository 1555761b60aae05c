import { BaseGatewayDriver } from './base_driver.ts'
import { createHmac } from 'node:crypto'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import {
  header,
  isObject,
  jsonObject,
  optionalString,
  queryValue,
  requiredString,
  safeCompare,
} from './helpers.ts'

export interface AbacatePayGatewayOptions {
  /** The `webhookSecret` query parameter set on the webhook URL (ABACATEPAY_WEBHOOK_SECRET) */
  webhookSecret?: string
  /** AbacatePay's published HMAC public key (ABACATEPAY_PUBLIC_KEY) */
  publicKey?: string
}

const SUCCEEDED = new Set(['billing.paid', 'checkout.completed', 'transparent.completed'])
const REFUNDED = new Set(['billing.refunded', 'checkout.refunded', 'transparent.refunded'])
const DISPUTED = new Set(['billing.disputed', 'checkout.disputed', 'transparent.disputed'])
const FAILED = new Set(['billing.failed', 'checkout.failed', 'transparent.failed'])

/**
 * AbacatePay: `X-Webhook-Signature` is the base64 HMAC-SHA256 of
 * the raw body keyed with AbacatePay's public key (integrity), and the
 * `webhookSecret` query parameter proves the origin. Both are required.
 */
export class AbacatePayDriver extends BaseGatewayDriver<AbacatePayGatewayOptions> {
  readonly subscribedEvents = ['billing.paid', 'billing.refunded', 'billing.disputed']

  constructor(options: AbacatePayGatewayOptions) {
    super('abacatepay', options)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const { webhookSecret, publicKey } = this.options
    if (!webhookSecret || !publicKey) {
      reject('abacatepay needs both webhookSecret and publicKey')
    }
    const secret = queryValue(request, 'webhookSecret')
    if (!secret || !safeCompare(webhookSecret, secret)) {
      reject('missing or wrong webhookSecret query parameter')
    }
    const signature = header(request, 'x-webhook-signature')
    if (!signature) {
      reject('missing X-Webhook-Signature header')
    }
    const expected = createHmac('sha256', publicKey).update(request.rawBody).digest('base64')
    if (!safeCompare(expected, signature)) {
      reject('X-Webhook-Signature does not match the body')
    }
    const body = jsonObject(request.rawBody)
    const id = requiredString(body.id, 'event id')
    const name = requiredString(body.event, 'event')
    const data = isObject(body.data) ? body.data : {}
    const billing = [data.billing, data.checkout, data.transparent, data.pixQrCode].find(isObject)
    const base = { id, provider, raw: body, occurredAt: null }
    if (!billing) {
      return { ...base, type: passthroughType(name), data }
    }
    const metadata = isObject(billing.metadata) ? billing.metadata : {}
    const payment = {
      paymentId: requiredString(billing.id, 'billing id'),
      amount: billing.amount !== undefined ? integerAmount(billing.amount) : undefined,
      currency: 'BRL',
      customerId: optionalString(billing.customer?.id ?? billing.customerId),
      externalReference:
        optionalString(metadata.externalReference) ??
        optionalString(metadata.external_reference) ??
        optionalString(billing.externalId),
    }
    if (SUCCEEDED.has(name)) {
      return { ...base, type: 'payment.succeeded', data: { ...payment, status: 'paid' } }
    }
    if (FAILED.has(name)) {
      return { ...base, type: 'payment.failed', data: { ...payment, status: 'failed' } }
    }
    if (REFUNDED.has(name)) {
      return { ...base, type: 'payment.refunded', data: payment }
    }
    if (DISPUTED.has(name)) {
      return {
        ...base,
        type: 'payment.disputed',
        data: {
          disputeId: `${payment.paymentId}:dispute`,
          paymentId: payment.paymentId,
          amount: payment.amount,
          currency: 'BRL',
          externalReference: payment.externalReference,
        },
      }
    }
    return { ...base, type: passthroughType(name), data }
  }
}
