import { BaseGatewayDriver } from './base_driver.ts'
import { createHmac } from 'node:crypto'
import { PaymentsConfigException, reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { integerAmount } from '../money.ts'
import type { DisputeOutcome, WebhookEvent, WebhookRequest } from '../types.ts'
import {
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  requiredString,
  safeCompare,
} from './helpers.ts'

export interface AdyenGatewayOptions {
  /** The HMAC key (hex) generated for the webhook in the Customer Area (ADYEN_HMAC_KEY) */
  hmacKey?: string
}

/**
 * The string Adyen signs for one notification item.
 */
export function adyenSigningString(item: Record<string, any>) {
  const amount = isObject(item.amount) ? item.amount : {}
  return [
    item.pspReference,
    item.originalReference,
    item.merchantAccountCode,
    item.merchantReference,
    amount.value,
    amount.currency,
    item.eventCode,
    item.success,
  ]
    .map((value) => (value === undefined || value === null ? '' : String(value)))
    .join(':')
}

/**
 * The base64 HMAC-SHA256 of one notification item, keyed with the hex-decoded key.
 */
export function adyenItemSignature(item: Record<string, any>, hexKey: string) {
  return createHmac('sha256', Buffer.from(hexKey, 'hex'))
    .update(adyenSigningString(item), 'utf8')
    .digest('base64')
}

const WARNINGS = new Set([
  'NOTIFICATION_OF_CHARGEBACK',
  'REQUEST_FOR_INFORMATION',
  'NOTIFICATION_OF_FRAUD',
])
const CLOSED: Record<string, DisputeOutcome> = {
  CHARGEBACK_REVERSED: 'won',
  PREARBITRATION_WON: 'won',
  SECOND_CHARGEBACK: 'lost',
  PREARBITRATION_LOST: 'lost',
}

/**
 * Adyen: each `NotificationRequestItem` carries its own
 * `additionalData.hmacSignature`. Every item is verified before any is
 * mapped; one bad item rejects the whole delivery.
 */
export class AdyenDriver extends BaseGatewayDriver<AdyenGatewayOptions> {
  readonly subscribedEvents = [
    'AUTHORISATION',
    'CAPTURE',
    'CANCELLATION',
    'REFUND',
    'CHARGEBACK',
    'CHARGEBACK_REVERSED',
    'SECOND_CHARGEBACK',
    'NOTIFICATION_OF_CHARGEBACK',
    'REQUEST_FOR_INFORMATION',
    'NOTIFICATION_OF_FRAUD',
  ]

  constructor(options: AdyenGatewayOptions) {
    super('adyen', options)
    if (options.hmacKey && !/^([0-9a-fA-F]{2})+$/.test(options.hmacKey)) {
      throw new PaymentsConfigException(
        'Invalid "hmacKey" for adyen in config/payments.ts: expected the hex key from the Customer Area (ADYEN_HMAC_KEY)'
      )
    }
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent[] {
    const key = this.options.hmacKey
    if (!key) {
      reject('adyen has no hmacKey')
    }
    const body = jsonObject(request.rawBody)
    if (!Array.isArray(body.notificationItems) || body.notificationItems.length === 0) {
      reject('Adyen delivery has no notificationItems')
    }
    const items = body.notificationItems.map((entry: unknown, index: number) => {
      const item = isObject(entry) ? entry.NotificationRequestItem : undefined
      if (!isObject(item)) {
        reject(`notificationItems[${index}] has no NotificationRequestItem`)
      }
      const signature = optionalString(item.additionalData?.hmacSignature)
      if (!signature) {
        reject(`notificationItems[${index}] has no additionalData.hmacSignature`)
      }
      if (!safeCompare(adyenItemSignature(item, key), signature)) {
        reject(`notificationItems[${index}] has a wrong hmacSignature`)
      }
      return item
    })
    return items.map((item: Record<string, any>) => this.#map(item, provider))
  }

  #map(item: Record<string, any>, provider: string): WebhookEvent {
    const psp = requiredString(item.pspReference, 'pspReference')
    const original = optionalString(item.originalReference)
    const code = requiredString(item.eventCode, 'eventCode')
    const success = String(item.success) === 'true'
    const amount = isObject(item.amount) ? item.amount : {}
    const money = {
      amount: amount.value !== undefined ? integerAmount(amount.value) : undefined,
      currency: optionalString(amount.currency) ?? undefined,
    }
    const externalReference = optionalString(item.merchantReference)
    const base = {
      id: `adyen:${psp}:${original ?? '-'}:${code}:${success}`,
      provider,
      raw: item,
      occurredAt: isoDate(item.eventDate),
    }
    const paymentId = original ?? psp
    switch (code) {
      case 'AUTHORISATION':
        return {
          ...base,
          type: success ? 'payment.succeeded' : 'payment.failed',
          data: {
            paymentId: psp,
            ...money,
            status: success ? 'paid' : 'failed',
            externalReference,
          },
        }
      case 'CANCELLATION':
        return success
          ? {
              ...base,
              type: 'payment.failed',
              data: { paymentId, status: 'failed', externalReference },
            }
          : { ...base, type: 'cancellation_failed', data: item }
      case 'REFUND':
        // Adyen reports each refund alone; the processor sums refunds per payment
        return success
          ? {
              ...base,
              type: 'payment.updated',
              data: {
                paymentId,
                externalReference,
                refunds: [{ id: psp, amount: money.amount ?? 0 }],
              },
            }
          : { ...base, type: 'refund_failed', data: item }
      case 'CHARGEBACK':
        return {
          ...base,
          type: 'payment.disputed',
          data: dispute(paymentId, money, item, externalReference),
        }
      default:
        if (WARNINGS.has(code)) {
          return {
            ...base,
            type: 'payment.dispute_warning',
            data: dispute(paymentId, money, item, externalReference),
          }
        }
        if (CLOSED[code]) {
          return {
            ...base,
            type: 'payment.dispute_closed',
            data: { ...dispute(paymentId, money, item, externalReference), outcome: CLOSED[code] },
          }
        }
        return { ...base, type: passthroughType(code), data: item }
    }
  }
}

function dispute(
  paymentId: string,
  money: { amount?: number; currency?: string },
  item: Record<string, any>,
  externalReference: string | null
) {
  return {
    disputeId: `${paymentId}:chargeback`,
    paymentId,
    ...money,
    reason: optionalString(item.reason),
    actionableUntil: isoDate(
      item.additionalData?.defenseDeadline ?? item.additionalData?.defensePeriodEndsAt
    ),
    externalReference,
  }
}
