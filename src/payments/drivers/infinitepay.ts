import { BaseGatewayDriver } from './base_driver.ts'
import { callGatewayApi } from './gateway_api.ts'
import { reject, WebhookRejectedException } from '../errors.ts'
import { integerAmount } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import { isObject, jsonObject, optionalString, requiredString } from './helpers.ts'
import debug from '../debug.ts'

export interface InfinitePayGatewayOptions {
  /** Your InfiniteTag without the `$` (INFINITEPAY_HANDLE): the payment check needs it */
  handle?: string
  /** Base URL of InfinitePay's API (default `https://api.infinitepay.io`), for tests and proxies */
  apiBaseUrl?: string
  /** How long the payment check may take, in ms (default 10 000) */
  timeoutMs?: number
}

/** What the payment check confirmed, keyed by the delivery it confirmed */
interface Confirmation {
  amount: number
}

const PAYMENT_CHECK_PATH = '/invoices/public/checkout/payment_check'

/**
 * InfinitePay (checkout): its webhook carries no signature, so a delivery is
 * never trusted as sent. `confirm()` asks InfinitePay's public payment check
 * whether that transaction of that order is paid, and the payment is
 * recorded with the amount InfinitePay reports, not the one in the body.
 */
export class InfinitePayDriver extends BaseGatewayDriver<InfinitePayGatewayOptions> {
  readonly subscribedEvents = ['checkout payment approved']
  #confirmed = new WeakMap<WebhookRequest, Confirmation>()
  #endpoint: string

  constructor(options: InfinitePayGatewayOptions = {}) {
    super('infinitepay', options)
    const base = (options.apiBaseUrl ?? 'https://api.infinitepay.io').replace(/\/+$/, '')
    this.#endpoint = `${base}${PAYMENT_CHECK_PATH}`
  }

  /**
   * Asks InfinitePay whether the delivery's transaction is paid; anything
   * but a clear "paid" (unknown transaction, API down, timeout) rejects, and
   * InfinitePay retries a delivery answered 400.
   */
  async confirm(request: WebhookRequest) {
    if (!this.options.handle) {
      reject('infinitepay has no handle to check payments with')
    }
    const body = jsonObject(request.rawBody)
    const check = {
      handle: this.options.handle,
      order_nsu: requiredString(body.order_nsu, 'order_nsu'),
      transaction_nsu: requiredString(body.transaction_nsu, 'transaction_nsu'),
      slug: requiredString(body.invoice_slug, 'invoice_slug'),
    }
    let answer: unknown
    try {
      const response = await callGatewayApi(this.#endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(check),
        timeoutMs: this.options.timeoutMs ?? 10_000,
      })
      if (response.status < 200 || response.status > 299) {
        reject(`InfinitePay payment check answered ${response.status}`)
      }
      answer = response.body
    } catch (error) {
      if (error instanceof WebhookRejectedException) throw error
      debug('infinitepay payment check failed: %s', (error as Error)?.message)
      reject('InfinitePay payment check could not be reached')
    }
    if (!isObject(answer) || answer.paid !== true) {
      reject('InfinitePay does not confirm this transaction as paid')
    }
    this.#confirmed.set(request, { amount: integerAmount(answer.paid_amount ?? answer.amount) })
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const confirmation = this.#confirmed.get(request)
    if (!confirmation) {
      reject('InfinitePay delivery was not confirmed: call confirm(request) before parse')
    }
    const body = jsonObject(request.rawBody)
    const transaction = requiredString(body.transaction_nsu, 'transaction_nsu')
    return {
      id: `infinitepay:${transaction}:paid`,
      type: 'payment.succeeded',
      provider,
      raw: body,
      occurredAt: null,
      data: {
        paymentId: transaction,
        amount: confirmation.amount,
        currency: 'BRL',
        status: 'paid',
        externalReference: optionalString(body.order_nsu),
      },
    }
  }
}
