import { BaseGatewayDriver } from './base_driver.ts'
import { createHash, createPublicKey, createVerify, type KeyObject } from 'node:crypto'
import debug from '../debug.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
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
  /** The PagBank API token (PAGBANK_TOKEN); also authorizes the public-keys request */
  token?: string
  /**
   * PagBank's ECDSA public key for `x-payload-signature` (PEM or base64 DER,
   * PAGBANK_PUBLIC_KEY). Without it the key is fetched from `publicKeysUrl`
   * the first time a signed delivery arrives, and cached.
   */
  publicKey?: string
  /** Where the public key is fetched (default `https://api.pagseguro.com/public-keys`) */
  publicKeysUrl?: string
  /** How long a fetched key is trusted before it is fetched again, in ms (default 1 hour) */
  publicKeyTtlMs?: number
}

/** How long a failed public-key fetch answers for itself before PagBank is asked again */
const RETRY_AFTER_FAILURE_MS = 30_000

/**
 * Reads an EC public key given as PEM or base64 DER (SubjectPublicKeyInfo).
 */
export function readPagBankKey(value: string): KeyObject {
  return value.includes('-----BEGIN')
    ? createPublicKey(value)
    : createPublicKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'spki' })
}

/** The key string of PagBank's public-keys answer, in the shapes it is documented with */
function keyOf(answer: unknown): string | undefined {
  if (!isObject(answer)) return undefined
  if (typeof answer.public_key === 'string') return answer.public_key
  const list = Array.isArray(answer.public_keys) ? answer.public_keys.filter(isObject) : []
  const entry = list.find((item) => item.is_current !== false) ?? list[0]
  return optionalString(entry?.public_key ?? entry?.key) ?? undefined
}

/**
 * PagBank: a delivery carries `x-payload-signature` (ECDSA SHA-256 over the
 * raw body, DER base64, checked with PagBank's public key) and/or
 * `x-authenticity-token` (SHA-256 hex of `<token>-<raw body>`, a hash, not an
 * HMAC). The signature wins when present; the token hash is the fallback.
 * One delivery carries an order and its charges; each charge becomes one event.
 */
export class PagBankDriver extends BaseGatewayDriver<PagBankGatewayOptions> {
  readonly subscribedEvents = ['order notifications (notification_urls)']
  #token?: string
  #configuredKey?: KeyObject
  #fetched?: { key: KeyObject; at: number }
  #failure?: { at: number; message: string }
  #pending?: Promise<string | undefined>

  constructor(options: PagBankGatewayOptions) {
    super('pagbank', options)
    this.#token = options.webhookToken || options.token
    if (options.publicKey) {
      this.#configuredKey = readPagBankKey(options.publicKey)
    }
  }

  /**
   * Fetches PagBank's public key when a signed delivery arrives and none is
   * configured or cached (or the cached one is older than its TTL).
   */
  async confirm(request: WebhookRequest) {
    if (!header(request, 'x-payload-signature') || this.#configuredKey) {
      return
    }
    const ttl = this.options.publicKeyTtlMs ?? 60 * 60_000
    if (this.#fetched && Date.now() - this.#fetched.at < ttl) {
      return
    }
    // A failed fetch is not retried for a while: forged deliveries cannot make every request call PagBank
    if (this.#failure && Date.now() - this.#failure.at < RETRY_AFTER_FAILURE_MS) {
      if (this.#fetched) return
      reject(this.#failure.message)
    }
    // Concurrent deliveries share one request
    this.#pending ??= this.#fetchKey().finally(() => (this.#pending = undefined))
    const failure = await this.#pending
    // An expired key is still better than none while PagBank cannot be reached
    if (failure && !this.#fetched) {
      reject(failure)
    }
  }

  /** Fetches the public key; resolves to a failure message instead of throwing */
  async #fetchKey(): Promise<string | undefined> {
    const url = this.options.publicKeysUrl ?? 'https://api.pagseguro.com/public-keys'
    let failure: string
    try {
      const response = await fetch(url, {
        headers: {
          accept: 'application/json',
          ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
        },
        signal: AbortSignal.timeout(10_000),
      })
      const key = response.ok ? keyOf(await response.json()) : undefined
      if (key) {
        this.#fetched = { key: readPagBankKey(key), at: Date.now() }
        this.#failure = undefined
        return undefined
      }
      failure = response.ok
        ? 'PagBank public-keys answered without a key'
        : `PagBank public-keys answered ${response.status}`
    } catch (error) {
      debug('pagbank public key fetch failed: %s', (error as Error)?.message)
      failure = 'PagBank public key could not be fetched to check x-payload-signature'
    }
    this.#failure = { at: Date.now(), message: failure }
    return failure
  }

  #verify(request: WebhookRequest) {
    const signature = header(request, 'x-payload-signature')
    if (signature) {
      const key = this.#configuredKey ?? this.#fetched?.key
      if (!key) {
        reject('no PagBank public key to check x-payload-signature (call confirm first)')
      }
      let valid = false
      try {
        valid = createVerify('sha256')
          .update(request.rawBody)
          .verify({ key, dsaEncoding: 'der' }, signature, 'base64')
      } catch {
        valid = false
      }
      if (!valid) {
        reject('x-payload-signature does not match the body')
      }
      return
    }
    const received = header(request, 'x-authenticity-token')
    if (!received) {
      reject('missing x-payload-signature or x-authenticity-token header')
    }
    if (!this.#token) {
      reject('pagbank has no webhookToken for x-authenticity-token')
    }
    const expected = createHash('sha256')
      .update(`${this.#token}-`)
      .update(request.rawBody)
      .digest('hex')
    if (!safeCompare(expected, received.toLowerCase())) {
      reject('x-authenticity-token does not match the body')
    }
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent[] {
    this.#verify(request)
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
