import { integerAmount } from '../money.ts'
import type { PaymentDriver, WebhookEvent, WebhookRequest } from '../types.ts'
import { jsonObject, optionalString, requiredString } from './helpers.ts'

export interface InfinitePayGatewayOptions {}

/**
 * Gateway H, InfinitePay: publishes no signature; it notifies approved
 * checkout payments only. Trust it only as far as the transport.
 */
export class InfinitePayDriver implements PaymentDriver {
  readonly name = 'infinitepay'
  readonly credentialHint = 'none (InfinitePay signs nothing)'
  readonly subscribedEvents = ['checkout payment approved']
  readonly webhookVerification = 'unsupported' as const

  constructor(public options: InfinitePayGatewayOptions = {}) {}

  parse(request: WebhookRequest, provider: string): WebhookEvent {
    const body = jsonObject(request.rawBody)
    const transaction = requiredString(body.transaction_nsu, 'transaction_nsu')
    const amount = integerAmount(body.paid_amount ?? body.amount)
    return {
      id: `infinitepay:${transaction}:paid`,
      type: 'payment.succeeded',
      provider,
      raw: body,
      occurredAt: null,
      data: {
        paymentId: transaction,
        amount,
        currency: 'BRL',
        status: 'paid',
        externalReference: optionalString(body.order_nsu),
      },
    }
  }
}
