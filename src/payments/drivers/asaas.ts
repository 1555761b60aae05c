import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { passthroughType } from '../events.ts'
import { toMinorUnits } from '../money.ts'
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

export interface AsaasGatewayOptions {
  /** The access token set on the webhook in Asaas (ASAAS_WEBHOOK_TOKEN) */
  webhookToken?: string
}

export const ASAAS_EVENTS = [
  'PAYMENT_CONFIRMED',
  'PAYMENT_RECEIVED',
  'PAYMENT_OVERDUE',
  'PAYMENT_CREDIT_CARD_CAPTURE_REFUSED',
  'PAYMENT_REPROVED_BY_RISK_ANALYSIS',
  'PAYMENT_REFUNDED',
  'PAYMENT_PARTIALLY_REFUNDED',
  'PAYMENT_UPDATED',
  'PAYMENT_CHARGEBACK_REQUESTED',
  'PAYMENT_CHARGEBACK_DISPUTE',
  'PAYMENT_AWAITING_CHARGEBACK_REVERSAL',
  'SUBSCRIPTION_CREATED',
  'SUBSCRIPTION_UPDATED',
  'SUBSCRIPTION_DELETED',
  'SUBSCRIPTION_INACTIVATED',
]

const STATUS: Record<string, 'pending' | 'paid' | 'failed' | 'refunded'> = {
  PENDING: 'pending',
  AWAITING_RISK_ANALYSIS: 'pending',
  CONFIRMED: 'paid',
  RECEIVED: 'paid',
  RECEIVED_IN_CASH: 'paid',
  OVERDUE: 'failed',
  REFUNDED: 'refunded',
}

/**
 * Asaas: the `asaas-access-token` header equals the configured token.
 */
export class AsaasDriver extends BaseGatewayDriver<AsaasGatewayOptions> {
  readonly subscribedEvents = ASAAS_EVENTS

  constructor(options: AsaasGatewayOptions) {
    super('asaas', options)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    if (!this.options.webhookToken) {
      reject('asaas has no webhookToken')
    }
    const token = header(request, 'asaas-access-token')
    if (!token) {
      reject('missing asaas-access-token header')
    }
    if (!safeCompare(this.options.webhookToken, token)) {
      reject('asaas-access-token does not match')
    }
    const body = jsonObject(request.rawBody)
    const id = requiredString(body.id, 'event id')
    const name = requiredString(body.event, 'event')
    const base = { id, provider, raw: body, occurredAt: isoDate(body.dateCreated) }

    if (name.startsWith('SUBSCRIPTION_') && isObject(body.subscription)) {
      const subscription = body.subscription
      const type =
        name === 'SUBSCRIPTION_CREATED'
          ? 'subscription.created'
          : name === 'SUBSCRIPTION_DELETED' || name === 'SUBSCRIPTION_INACTIVATED'
            ? 'subscription.canceled'
            : name === 'SUBSCRIPTION_UPDATED'
              ? 'subscription.updated'
              : passthroughType(name)
      return {
        ...base,
        type,
        data: {
          subscriptionId: requiredString(subscription.id, 'subscription id'),
          customerId: optionalString(subscription.customer),
          status:
            type === 'subscription.canceled'
              ? 'canceled'
              : (optionalString(subscription.status)?.toLowerCase() ?? undefined),
          planId: null,
          currentPeriodEnd: isoDate(subscription.nextDueDate),
          externalReference: optionalString(subscription.externalReference),
        },
      }
    }
    if (!isObject(body.payment)) {
      return { ...base, type: passthroughType(name), data: body }
    }
    const payment = body.payment
    const paymentId = requiredString(payment.id, 'payment id')
    const common = {
      paymentId,
      amount: toMinorUnits(payment.value, 'BRL'),
      currency: 'BRL',
      customerId: optionalString(payment.customer),
      externalReference: optionalString(payment.externalReference),
    }
    switch (name) {
      case 'PAYMENT_CONFIRMED':
      case 'PAYMENT_RECEIVED':
        return {
          ...base,
          type: 'payment.succeeded',
          data: {
            ...common,
            status: 'paid',
            paidAt: isoDate(
              payment.clientPaymentDate ?? payment.paymentDate ?? payment.confirmedDate
            ),
          },
        }
      case 'PAYMENT_OVERDUE':
      case 'PAYMENT_CREDIT_CARD_CAPTURE_REFUSED':
      case 'PAYMENT_REPROVED_BY_RISK_ANALYSIS':
        return { ...base, type: 'payment.failed', data: { ...common, status: 'failed' } }
      case 'PAYMENT_REFUNDED':
        return { ...base, type: 'payment.refunded', data: common }
      case 'PAYMENT_PARTIALLY_REFUNDED': {
        const refunds = Array.isArray(payment.refunds)
          ? payment.refunds.filter(isObject).map((refund: Record<string, any>, index: number) => ({
              id: optionalString(refund.id) ?? `${paymentId}:refund:${index}`,
              amount: toMinorUnits(refund.value, 'BRL'),
            }))
          : []
        return { ...base, type: 'payment.updated', data: { ...common, refunds } }
      }
      case 'PAYMENT_UPDATED':
        return {
          ...base,
          type: 'payment.updated',
          data: { ...common, status: STATUS[String(payment.status)] },
        }
      case 'PAYMENT_CHARGEBACK_REQUESTED':
      case 'PAYMENT_CHARGEBACK_DISPUTE':
      case 'PAYMENT_AWAITING_CHARGEBACK_REVERSAL': {
        const chargeback = isObject(payment.chargeback) ? payment.chargeback : {}
        return {
          ...base,
          type:
            name === 'PAYMENT_CHARGEBACK_REQUESTED' ? 'payment.disputed' : passthroughType(name),
          data: {
            disputeId: `${paymentId}:chargeback`,
            paymentId,
            amount: common.amount,
            currency: 'BRL',
            reason: optionalString(chargeback.reason),
            actionableUntil: null,
            externalReference: common.externalReference,
          },
        }
      }
      default:
        return { ...base, type: passthroughType(name), data: common }
    }
  }
}
