import { BaseGatewayDriver } from './base_driver.ts'
import { callGatewayApi } from './gateway_api.ts'
import { reject, WebhookRejectedException } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { toMinorUnits } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import {
  header,
  hmacMatches,
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  queryValue,
  requiredString,
} from './helpers.ts'
import debug from '../debug.ts'

export interface MercadoPagoGatewayOptions {
  /** The application's webhook secret signature (MERCADOPAGO_WEBHOOK_SECRET) */
  webhookSecret?: string
  /** Access token the driver reads the notified payment or subscription with (MERCADOPAGO_ACCESS_TOKEN) */
  accessToken?: string
  /** Seconds the `ts` of `x-signature` stays valid (default 300) */
  tolerance?: number
  /** Base URL of Mercado Pago's API (default `https://api.mercadopago.com`), for tests and proxies */
  apiBaseUrl?: string
  /** How long reading the notified resource may take, in ms (default 10 000) */
  timeoutMs?: number
}

export const MERCADOPAGO_EVENTS = ['payment', 'subscription_preapproval', 'topic_chargebacks_wh']

/** Where each notified topic's current state is read */
const RESOURCES: Record<string, (id: string) => string> = {
  payment: (id) => `/v1/payments/${id}`,
  subscription_preapproval: (id) => `/preapproval/${id}`,
  topic_chargebacks_wh: (id) => `/v1/chargebacks/${id}`,
  chargebacks: (id) => `/v1/chargebacks/${id}`,
}

/** What `confirm` read, keyed by the delivery it read it for */
interface Notified {
  topic: string
  dataId: string
  body: Record<string, any>
  resource: Record<string, any> | null
}

/**
 * The manifest Mercado Pago signs: `id:<data.id>;request-id:<x-request-id>;ts:<ts>;`,
 * where a part whose value is absent is left out and an alphanumeric
 * `data.id` is lowercased.
 */
export function mercadoPagoManifest(
  dataId: string | undefined,
  requestId: string | undefined,
  ts: string
) {
  let manifest = ''
  if (dataId) manifest += `id:${/^[a-z0-9]+$/i.test(dataId) ? dataId.toLowerCase() : dataId};`
  if (requestId) manifest += `request-id:${requestId};`
  return `${manifest}ts:${ts};`
}

/**
 * Mercado Pago: `x-signature` (`ts=…,v1=…`) is the hex HMAC-SHA256 of the
 * manifest above, keyed with the webhook secret, and `ts` must be recent.
 * Mercado Pago signs the notified resource's id, not the body, so the body
 * is never trusted: after the signature checks, `confirm` reads the
 * payment, subscription or chargeback through the API with the access
 * token, and that answer (never the body) is what gets recorded.
 */
export class MercadoPagoDriver extends BaseGatewayDriver<MercadoPagoGatewayOptions> {
  readonly subscribedEvents = MERCADOPAGO_EVENTS
  #notified = new WeakMap<WebhookRequest, Notified>()
  #base: string

  constructor(options: MercadoPagoGatewayOptions = {}) {
    super('mercadopago', options)
    this.#base = (options.apiBaseUrl ?? 'https://api.mercadopago.com').replace(/\/+$/, '')
  }

  /**
   * Checks `x-signature` against the signed manifest and returns the signed
   * `data.id` (from the query string, where Mercado Pago puts it).
   */
  verify(request: WebhookRequest): string {
    if (!this.options.webhookSecret) {
      reject('mercadopago has no webhookSecret')
    }
    const signature = header(request, 'x-signature')
    if (!signature) {
      reject('missing x-signature header')
    }
    const parts = new Map<string, string>()
    for (const part of signature.split(',')) {
      const at = part.indexOf('=')
      if (at > 0) parts.set(part.slice(0, at).trim(), part.slice(at + 1).trim())
    }
    const ts = parts.get('ts')
    const v1 = parts.get('v1')
    if (!ts || !/^\d{1,16}$/.test(ts) || !v1) {
      reject('x-signature is not "ts=<timestamp>,v1=<hex>"')
    }
    const dataId = queryValue(request, 'data.id')
    if (!dataId) {
      reject('missing data.id query parameter: Mercado Pago signs the notified id there')
    }
    const manifest = mercadoPagoManifest(dataId, header(request, 'x-request-id'), ts)
    if (!hmacMatches('sha256', this.options.webhookSecret, manifest, v1, 'hex')) {
      reject('x-signature does not match data.id, x-request-id and ts')
    }
    // Mercado Pago has sent ts in seconds and in milliseconds
    const seconds = ts.length > 11 ? Number(ts) / 1000 : Number(ts)
    const tolerance = this.options.tolerance ?? 300
    if (Math.abs(Date.now() / 1000 - seconds) > tolerance) {
      reject(`x-signature timestamp is outside the ${tolerance}-second tolerance`)
    }
    return dataId
  }

  /**
   * Verifies the delivery, then reads the notified resource's current state
   * through the API (anything but a clear answer rejects, and Mercado Pago
   * retries a delivery answered 400).
   */
  async confirm(request: WebhookRequest) {
    const dataId = this.verify(request)
    const body = jsonObject(request.rawBody)
    const topic = requiredString(body.type ?? body.topic, 'notification type')
    const bodyId = optionalString(body.data?.id)
    if (bodyId !== null && bodyId !== dataId) {
      reject('data.id of the body is not the signed data.id')
    }
    const path = RESOURCES[topic]
    if (!path) {
      this.#notified.set(request, { topic, dataId, body, resource: null })
      return
    }
    if (!this.options.accessToken) {
      reject('mercadopago has no accessToken to read the notified resource with')
    }
    this.#notified.set(request, { topic, dataId, body, resource: await this.#read(path(dataId)) })
  }

  async #read(path: string): Promise<Record<string, any>> {
    let answer: unknown
    try {
      const response = await callGatewayApi(`${this.#base}${path}`, {
        headers: { authorization: `Bearer ${this.options.accessToken}` },
        timeoutMs: this.options.timeoutMs ?? 10_000,
      })
      if (response.status < 200 || response.status > 299) {
        reject(`Mercado Pago answered ${response.status} for the notified resource`)
      }
      answer = response.body
    } catch (error) {
      if (error instanceof WebhookRejectedException) throw error
      debug('mercadopago resource read failed: %s', (error as Error)?.message)
      reject('Mercado Pago API could not be reached to read the notified resource')
    }
    if (!isObject(answer)) {
      reject('Mercado Pago answered something other than a JSON object')
    }
    return answer
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const notified = this.#notified.get(request)
    if (!notified) {
      reject('Mercado Pago delivery was not confirmed: call confirm(request) before parse')
    }
    const { topic, dataId, body, resource } = notified
    const base = { provider, raw: { notification: body, resource } }
    if (!resource) {
      const notice = optionalString(body.id) ?? header(request, 'x-request-id') ?? '-'
      return {
        ...base,
        id: `mercadopago:${topic}:${dataId}:${notice}`,
        type: passthroughType(topic),
        occurredAt: isoDate(body.date_created),
        data: body.data ?? {},
      }
    }
    if (String(resource.id) !== dataId) {
      reject('Mercado Pago answered with another resource than the notified one')
    }
    const version = optionalString(resource.date_last_updated ?? resource.last_modified) ?? '-'
    const occurredAt = isoDate(resource.date_last_updated ?? resource.last_modified)
    if (topic === 'payment') {
      const { status, type, data } = mapPayment(resource)
      return {
        ...base,
        type,
        data,
        id: `mercadopago:payment:${dataId}:${status}:${version}`,
        occurredAt,
      }
    }
    if (topic === 'subscription_preapproval') {
      const status = String(resource.status ?? '')
      return {
        ...base,
        id: `mercadopago:preapproval:${dataId}:${status}:${version}`,
        occurredAt,
        type:
          status === 'cancelled'
            ? 'subscription.canceled'
            : String(body.action ?? '').endsWith('created')
              ? 'subscription.created'
              : 'subscription.updated',
        data: {
          subscriptionId: dataId,
          customerId: optionalString(resource.payer_id),
          status: status || undefined,
          planId: optionalString(resource.preapproval_plan_id),
          currentPeriodEnd: isoDate(resource.next_payment_date),
          canceledAt: status === 'cancelled' ? occurredAt : null,
          externalReference: optionalString(resource.external_reference),
        },
      }
    }
    return {
      ...base,
      ...mapChargeback(resource),
      id: `mercadopago:chargeback:${dataId}:${version}`,
      occurredAt,
    }
  }
}

function amountOf(value: unknown, currency: string | undefined) {
  return toMinorUnits(value, currency ?? 'BRL')
}

function mapPayment(payment: Record<string, any>) {
  const status = String(payment.status ?? '')
  const currency = optionalString(payment.currency_id) ?? undefined
  const paymentId = requiredString(payment.id, 'payment id')
  const data = {
    paymentId,
    amount: amountOf(payment.transaction_amount, currency),
    currency,
    customerId: optionalString(payment.payer?.id),
    externalReference: optionalString(payment.external_reference),
  }
  const refunded =
    payment.transaction_amount_refunded === undefined ||
    payment.transaction_amount_refunded === null
      ? 0
      : amountOf(payment.transaction_amount_refunded, currency)
  // Mercado Pago reports the cumulative refunded amount on the payment
  const refunds = [{ id: `${paymentId}:cumulative`, amount: refunded }]
  switch (status) {
    case 'approved':
      if (refunded > 0) {
        return {
          status,
          type: 'payment.updated',
          data: { ...data, refundedAmount: refunded, refunds },
        }
      }
      return {
        status,
        type: 'payment.succeeded',
        data: { ...data, status: 'paid', paidAt: isoDate(payment.date_approved) },
      }
    case 'rejected':
    case 'cancelled':
      return { status, type: 'payment.failed', data: { ...data, status: 'failed' } }
    case 'refunded':
      return {
        status,
        type: 'payment.refunded',
        data: { ...data, refundedAmount: refunded || data.amount, refunds },
      }
    case 'in_mediation':
    case 'charged_back': {
      return {
        status,
        // A claim holds the money while Mercado Pago mediates; a chargeback takes it
        type: status === 'in_mediation' ? 'payment.dispute_warning' : 'payment.disputed',
        data: {
          disputeId: `${paymentId}:${status}`,
          paymentId,
          amount: data.amount,
          currency,
          reason: optionalString(payment.status_detail),
          actionableUntil: null,
          externalReference: data.externalReference,
        },
      }
    }
    default:
      return { status, type: 'payment.updated', data: { ...data, status: 'pending' } }
  }
}

function mapChargeback(chargeback: Record<string, any>) {
  const currency = optionalString(chargeback.currency) ?? undefined
  const data = {
    disputeId: requiredString(chargeback.id, 'chargeback id'),
    paymentId: requiredString(chargeback.payments?.[0], 'chargeback payment'),
    amount: amountOf(chargeback.amount, currency),
    currency,
    reason: optionalString(chargeback.reason),
    actionableUntil: isoDate(chargeback.date_documentation_deadline),
  }
  if (chargeback.coverage_applied === true) {
    // Mercado Pago covered the chargeback: the money stays with the seller
    return { type: 'payment.dispute_closed', data: { ...data, outcome: 'won' } }
  }
  return { type: 'payment.disputed', data }
}
