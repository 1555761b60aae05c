import { createHmac } from 'node:crypto'
import { createMollieClient, type MollieClient } from '@mollie/api-client'
import { BaseGatewayDriver } from './base_driver.ts'
import debug from '../debug.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { toMinorUnits } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import { header, isObject, isoDate, jsonObject, optionalString, safeCompare } from './helpers.ts'

export interface MollieGatewayOptions {
  /** Signing secret of a next-gen webhook (MOLLIE_WEBHOOK_SECRET) */
  webhookSecret?: string
  /** API key the classic id-only webhook's payment is fetched with (MOLLIE_API_KEY) */
  apiKey?: string
  /** The SDK's `apiEndpoint` (default `https://api.mollie.com:443/v2/`), for tests and proxies */
  apiEndpoint?: string
}

export const MOLLIE_EVENTS = ['payment webhookUrl (id=tr_...)', 'payment-link.paid']

/** What a delivery was, once trusted */
type Trusted =
  { kind: 'signed'; event: Record<string, any> } | { kind: 'payment'; payment: Record<string, any> }

const PAYMENT_ID = /^tr_[A-Za-z0-9]{1,64}$/

/**
 * The `X-Mollie-Signature` values of a delivery: `sha256=<hex>`, twice
 * (comma-joined) while Mollie rotates the secret.
 */
function signatures(value: string) {
  return value
    .split(',')
    .map((part) => part.trim().replace(/^sha256=/, ''))
    .filter(Boolean)
}

/**
 * Mollie: next-gen webhooks carry `X-Mollie-Signature: sha256=<hex HMAC-SHA256
 * of the raw body>`; the classic webhook posts only `id=tr_...` and proves
 * nothing, so the driver fetches that payment through `@mollie/api-client`
 * and records what Mollie answers, never what the body claims.
 */
export class MollieDriver extends BaseGatewayDriver<MollieGatewayOptions> {
  readonly subscribedEvents = MOLLIE_EVENTS
  readonly client?: MollieClient
  #trusted = new WeakMap<WebhookRequest, Trusted>()

  constructor(options: MollieGatewayOptions) {
    super('mollie', options)
    if (options.apiKey) {
      this.client = createMollieClient({
        apiKey: options.apiKey,
        ...(options.apiEndpoint ? { apiEndpoint: options.apiEndpoint } : {}),
      })
    }
  }

  async confirm(request: WebhookRequest) {
    const signature = header(request, 'x-mollie-signature')
    if (signature) {
      this.#trusted.set(request, { kind: 'signed', event: this.#verifySigned(request, signature) })
      return
    }
    const id = new URLSearchParams(request.rawBody.toString('utf8')).get('id')
    if (!id) {
      reject('missing X-Mollie-Signature header or id in the body')
    }
    if (!PAYMENT_ID.test(id)) {
      reject('Mollie id is not a payment id (tr_...)')
    }
    if (!this.client) {
      reject('mollie has no apiKey to fetch the payment of a classic webhook')
    }
    let payment: Record<string, any>
    try {
      payment = (await this.client.payments.get(id)) as unknown as Record<string, any>
    } catch (error) {
      debug('mollie payment %s could not be fetched: %s', id, (error as Error)?.message)
      reject('Mollie does not confirm this payment')
    }
    if (!isObject(payment) || payment.id !== id) {
      reject('Mollie answered with another payment')
    }
    this.#trusted.set(request, { kind: 'payment', payment })
  }

  #verifySigned(request: WebhookRequest, signature: string) {
    const secret = this.options.webhookSecret
    if (!secret) {
      reject('mollie has no webhookSecret for X-Mollie-Signature')
    }
    const expected = createHmac('sha256', secret).update(request.rawBody).digest('hex')
    // Every value is compared, so the time taken does not tell which one matched
    const matches = signatures(signature).map((value) => safeCompare(expected, value.toLowerCase()))
    if (!matches.includes(true)) {
      reject('X-Mollie-Signature does not match the body')
    }
    return jsonObject(request.rawBody)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const trusted = this.#trusted.get(request)
    if (!trusted) {
      reject('Mollie delivery was not verified: call confirm(request) before parse')
    }
    return trusted.kind === 'signed'
      ? signedEvent(trusted.event, provider)
      : paymentEvent(trusted.payment, provider)
  }
}

function money(amount: unknown) {
  if (!isObject(amount)) return undefined
  const currency = String(amount.currency ?? '').toUpperCase()
  return { amount: toMinorUnits(amount.value, currency), currency }
}

function reference(object: Record<string, any>): string | null {
  const metadata = isObject(object.metadata) ? object.metadata : {}
  return optionalString(metadata.externalReference) ?? optionalString(metadata.external_reference)
}

/**
 * A payment as Mollie answered it. Its state (status, refunded and charged
 * back amounts) makes the event id, so a repeated webhook for an unchanged
 * payment is the same event, and each change is a new one.
 */
function paymentEvent(payment: Record<string, any>, provider: string): WebhookEvent {
  const paymentId = String(payment.id)
  const status = String(payment.status ?? '')
  const charged = money(payment.amount)
  const refunded = money(payment.amountRefunded)?.amount ?? 0
  const chargedBack = money(payment.amountChargedBack)?.amount ?? 0
  const base = {
    id: `mollie:${paymentId}:${status}:${refunded}:${chargedBack}`,
    provider,
    raw: payment,
    occurredAt: isoDate(payment.paidAt ?? payment.createdAt),
  }
  const common = {
    paymentId,
    amount: charged?.amount,
    currency: charged?.currency,
    customerId: optionalString(payment.customerId),
    externalReference: reference(payment),
  }
  if (status === 'paid' && chargedBack > 0) {
    // Mollie withdraws a chargeback at once: no inquiry stage
    return {
      ...base,
      type: 'payment.disputed',
      data: {
        disputeId: `${paymentId}:chargeback`,
        paymentId,
        amount: chargedBack,
        currency: charged?.currency,
        reason: null,
        actionableUntil: null,
        externalReference: common.externalReference,
      },
    }
  }
  if (status === 'paid' && refunded > 0) {
    return {
      ...base,
      type: charged && refunded >= charged.amount ? 'payment.refunded' : 'payment.updated',
      data: { ...common, refundedAmount: refunded },
    }
  }
  switch (status) {
    case 'paid':
      return {
        ...base,
        type: 'payment.succeeded',
        data: { ...common, status: 'paid', paidAt: isoDate(payment.paidAt) },
      }
    case 'failed':
    case 'canceled':
    case 'expired':
      return { ...base, type: 'payment.failed', data: { ...common, status: 'failed' } }
    default:
      // open, pending, authorized: not money yet
      return { ...base, type: 'payment.updated', data: { ...common, status: 'pending' } }
  }
}

function signedEvent(event: Record<string, any>, provider: string): WebhookEvent {
  const id = optionalString(event.id)
  const type = optionalString(event.type)
  if (!id || !type) {
    reject('Mollie event has no id or type')
  }
  const entity = isObject(event._embedded?.entity) ? event._embedded.entity : undefined
  const base = { id, provider, raw: event, occurredAt: isoDate(event.createdAt) }
  if (type === 'payment-link.paid' && entity) {
    const charged = money(entity.amount)
    return {
      ...base,
      type: 'payment.succeeded',
      data: {
        paymentId: optionalString(event.entityId) ?? optionalString(entity.id),
        amount: charged?.amount,
        currency: charged?.currency,
        status: 'paid',
        paidAt: isoDate(entity.paidAt),
        customerId: optionalString(entity.customerId),
        externalReference: reference(entity) ?? optionalString(entity.description),
      },
    }
  }
  return { ...base, type: passthroughType(type), data: entity ?? event }
}
