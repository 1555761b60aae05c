import { createHash } from 'node:crypto'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { PaymentDriver, WebhookEvent, WebhookRequest, WebhookVerification } from '../types.ts'
import {
  header,
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  requiredString,
  safeCompare,
} from './helpers.ts'

export interface PagBankGatewayOptions {
  /** Token used for `x-authenticity-token` (PAGBANK_WEBHOOK_TOKEN); defaults to `token` */
  webhookToken?: string
  /** The PagBank API token (PAGBANK_TOKEN) */
  token?: string
}

/**
 * Gateway E, PagBank: `x-authenticity-token` is the SHA-256 hex of
 * `<token>-<raw body>` (a hash, not an HMAC). One delivery carries an order
 * and its charges; each charge becomes one event.
 */
export class PagBankDriver implements PaymentDriver {
  readonly name = 'pagbank'
  readonly credentialHint = 'webhookToken or token (PAGBANK_WEBHOOK_TOKEN, PAGBANK_TOKEN)'
  readonly subscribedEvents = ['order notifications (notification_urls)']
  readonly webhookVerification: WebhookVerification
  #token?: string

  constructor(public options: PagBankGatewayOptions) {
    this.#token = options.webhookToken || options.token
    this.webhookVerification = this.#token ? 'configured' : 'unconfigured'
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent[] {
    if (!this.#token) {
      reject('pagbank has no webhookToken')
    }
    const received = header(request, 'x-authenticity-token')
    if (!received) {
      reject('missing x-authenticity-token header')
    }
    const expected = createHash('sha256')
      .update(`${this.#token}-`)
      .update(request.rawBody)
      .digest('hex')
    if (!safeCompare(expected, received.toLowerCase())) {
      reject('x-authenticity-token does not match the body')
    }
    const order = jsonObject(request.rawBody)
    const orderId = requiredString(order.id, 'order id')
    const charges = Array.isArray(order.charges) ? order.charges.filter(isObject) : []
    if (charges.length === 0) {
      reject('PagBank order carries no charges')
    }
    return charges.map((charge: Record<string, any>) => {
      const chargeId = requiredString(charge.id, 'charge id')
      const status = requiredString(charge.status, 'charge status').toUpperCase()
      const amountInfo = isObject(charge.amount) ? charge.amount : {}
      const summary = isObject(amountInfo.summary) ? amountInfo.summary : {}
      const amount = integerAmount(amountInfo.value)
      const refunded = summary.refunded !== undefined ? integerAmount(summary.refunded) : 0
      const common = {
        paymentId: chargeId,
        amount,
        currency: optionalString(amountInfo.currency) ?? 'BRL',
        externalReference:
          optionalString(charge.reference_id) ?? optionalString(order.reference_id),
        customerId: optionalString(order.customer?.tax_id),
      }
      const base = {
        provider,
        raw: charge,
        occurredAt: isoDate(charge.paid_at ?? charge.created_at),
        id: `pagbank:${orderId}:${chargeId}:${status}${refunded ? `:r${refunded}` : ''}`,
      }
      if (refunded > 0) {
        // PagBank reports the cumulative refunded amount of the charge
        const refunds = [{ id: `${chargeId}:cumulative`, amount: refunded }]
        return refunded >= amount
          ? {
              ...base,
              type: 'payment.refunded',
              data: { ...common, refundedAmount: refunded, refunds },
            }
          : {
              ...base,
              type: 'payment.updated',
              data: { ...common, refundedAmount: refunded, refunds },
            }
      }
      switch (status) {
        case 'PAID':
          return {
            ...base,
            type: 'payment.succeeded',
            data: { ...common, status: 'paid', paidAt: isoDate(charge.paid_at) },
          }
        case 'DECLINED':
        case 'CANCELED':
          return { ...base, type: 'payment.failed', data: { ...common, status: 'failed' } }
        case 'AUTHORIZED':
        case 'WAITING':
        case 'IN_ANALYSIS':
          return { ...base, type: 'payment.updated', data: { ...common, status: 'pending' } }
        default:
          return { ...base, type: passthroughType(status), data: common }
      }
    })
  }
}
