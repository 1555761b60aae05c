import { BaseGatewayDriver } from './base_driver.ts'
import { createHmac, createPublicKey, createVerify, type KeyObject } from 'node:crypto'
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

export interface WooviGatewayOptions {
  /** Woovi's public key, PEM or base64-encoded PEM (WOOVI_WEBHOOK_PUBLIC_KEY) */
  webhookPublicKey?: string
  /** Deprecated per-webhook HMAC-SHA1 secret (WOOVI_WEBHOOK_SECRET); ignored when a public key is set */
  webhookSecret?: string
}

/**
 * Reads a PEM given as is or base64-encoded (as Woovi publishes it).
 */
export function readPublicKey(value: string): KeyObject {
  const pem = value.includes('-----BEGIN') ? value : Buffer.from(value, 'base64').toString('utf8')
  return createPublicKey(pem)
}

/**
 * Woovi (OpenPix): `x-webhook-signature` is an RSA-SHA256
 * signature (base64) of the raw body; the deprecated `X-OpenPix-Signature`
 * is a base64 HMAC-SHA1. A configured public key wins over the secret.
 */
export class WooviDriver extends BaseGatewayDriver<WooviGatewayOptions> {
  readonly subscribedEvents = [
    'OPENPIX:CHARGE_COMPLETED',
    'OPENPIX:CHARGE_EXPIRED',
    'OPENPIX:TRANSACTION_REFUND_RECEIVED',
  ]
  #key?: KeyObject

  constructor(options: WooviGatewayOptions) {
    super('woovi', options)
    if (options.webhookPublicKey) {
      this.#key = readPublicKey(options.webhookPublicKey)
    }
  }

  #verify(request: WebhookRequest) {
    if (this.#key) {
      const signature = header(request, 'x-webhook-signature')
      if (!signature) {
        reject('missing x-webhook-signature header')
      }
      const verifier = createVerify('RSA-SHA256')
      verifier.update(request.rawBody)
      let valid = false
      try {
        valid = verifier.verify(this.#key, signature, 'base64')
      } catch {
        valid = false
      }
      if (!valid) {
        reject('x-webhook-signature does not match the body')
      }
      return
    }
    if (!this.options.webhookSecret) {
      reject('woovi has neither webhookPublicKey nor webhookSecret')
    }
    const signature = header(request, 'x-openpix-signature')
    if (!signature) {
      reject('missing X-OpenPix-Signature header')
    }
    const expected = createHmac('sha1', this.options.webhookSecret)
      .update(request.rawBody)
      .digest('base64')
    if (!safeCompare(expected, signature)) {
      reject('X-OpenPix-Signature does not match the body')
    }
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    this.#verify(request)
    const body = jsonObject(request.rawBody)
    const name = optionalString(body.event) ?? optionalString(body.evento)
    if (!name) {
      reject('Woovi delivery names no event')
    }
    const charge = isObject(body.charge) ? body.charge : null
    const pix = isObject(body.pix) ? body.pix : null
    const base = { provider, raw: body, occurredAt: isoDate(pix?.time ?? charge?.updatedAt) }
    if (!charge && !pix) {
      // The test delivery Woovi sends when a webhook is registered
      return { ...base, id: `woovi:${name}`, type: passthroughType(name), data: body }
    }
    const paymentId = requiredString(
      charge?.identifier ?? charge?.globalID ?? charge?.correlationID ?? pix?.transactionID,
      'charge id'
    )
    const status = optionalString(charge?.status) ?? 'UNKNOWN'
    const common = {
      paymentId,
      amount: integerAmount(charge?.value ?? pix?.value),
      currency: 'BRL',
      externalReference: optionalString(charge?.correlationID),
    }
    switch (name) {
      case 'OPENPIX:CHARGE_COMPLETED':
      case 'OPENPIX:TRANSACTION_RECEIVED':
        return {
          ...base,
          id: `woovi:${paymentId}:${optionalString(pix?.endToEndId) ?? '-'}:${status}`,
          type: 'payment.succeeded',
          data: { ...common, status: 'paid', paidAt: isoDate(charge?.paidAt ?? pix?.time) },
        }
      case 'OPENPIX:CHARGE_EXPIRED':
        return {
          ...base,
          id: `woovi:${paymentId}:-:${status}`,
          type: 'payment.failed',
          data: { ...common, status: 'failed' },
        }
      case 'OPENPIX:TRANSACTION_REFUND_RECEIVED': {
        const refund = isObject(body.refund)
          ? body.refund
          : isObject(pix?.refund)
            ? pix.refund
            : pix
        const refundId = requiredString(
          refund?.refundId ?? refund?.endToEndId ?? refund?.correlationID,
          'refund id'
        )
        // Woovi reports each refund alone; the processor sums them
        return {
          ...base,
          id: `woovi:${paymentId}:${refundId}:REFUNDED`,
          type: 'payment.updated',
          data: { ...common, refunds: [{ id: refundId, amount: integerAmount(refund?.value) }] },
        }
      }
      default:
        return {
          ...base,
          id: `woovi:${paymentId}:${name}:${status}`,
          type: passthroughType(name),
          data: common,
        }
    }
  }
}
