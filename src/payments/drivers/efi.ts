import { BaseGatewayDriver } from './base_driver.ts'
import { reject } from '../errors.ts'
import { toMinorUnits } from '../money.ts'
import type { WebhookEvent, WebhookRequest } from '../types.ts'
import {
  isObject,
  isoDate,
  jsonObject,
  optionalString,
  queryValue,
  requiredString,
  safeCompare,
} from './helpers.ts'

export interface EfiGatewayOptions {
  /**
   * The value of the `hmac` query parameter you appended to the webhook URL
   * registered at Efí (EFI_WEBHOOK_HMAC). Without it, only mutual TLS in
   * front of the app can authenticate Efí, and the provider must be listed
   * in `allowUnverifiedWebhooks`.
   */
  webhookHmac?: string
}

/**
 * True when a reference can be Efí's Pix `txid`: 26 to 35 alphanumerics.
 */
export function isEfiTxid(value: unknown): value is string {
  return typeof value === 'string' && /^[a-zA-Z0-9]{26,35}$/.test(value)
}

/**
 * Efí (Pix): the body is not signed. Efí authenticates with mutual TLS
 * (enforced by the proxy in front of the app) or, when the webhook URL was
 * registered with `?hmac=<value>`, by that parameter, checked here in
 * constant time. A delivery is a `pix[]` batch; refunds arrive as
 * `devolucoes` on the original Pix.
 */
export class EfiDriver extends BaseGatewayDriver<EfiGatewayOptions> {
  readonly subscribedEvents = ['pix']

  constructor(options: EfiGatewayOptions = {}) {
    super('efi', options)
  }

  parse(request: WebhookRequest, provider: string): WebhookEvent[] {
    if (this.options.webhookHmac) {
      const received = queryValue(request, 'hmac')
      if (!received || !safeCompare(this.options.webhookHmac, received)) {
        reject('missing or wrong hmac query parameter')
      }
    }
    const body = jsonObject(request.rawBody)
    if (!Array.isArray(body.pix) || body.pix.length === 0) {
      reject('Efí delivery has no pix[]')
    }
    return body.pix.flatMap((entry: unknown, index: number): WebhookEvent[] => {
      if (!isObject(entry)) {
        reject(`pix[${index}] is not an object`)
      }
      const endToEndId = requiredString(entry.endToEndId, `pix[${index}].endToEndId`)
      const txid = isEfiTxid(entry.txid) ? entry.txid : null
      const paymentId = txid ?? endToEndId
      const amount = toMinorUnits(entry.valor, 'BRL')
      const common = { paymentId, amount, currency: 'BRL', externalReference: txid }
      const refunds = Array.isArray(entry.devolucoes) ? entry.devolucoes.filter(isObject) : []
      if (refunds.length === 0) {
        return [
          {
            id: `efi:${endToEndId}:${txid ?? '-'}:paid`,
            type: 'payment.succeeded',
            provider,
            raw: entry,
            occurredAt: isoDate(entry.horario),
            data: { ...common, status: 'paid', paidAt: isoDate(entry.horario) },
          },
        ]
      }
      return refunds.map((refund: Record<string, any>) => {
        const refundId = requiredString(refund.id ?? refund.rtrId, 'devolucao id')
        const status = optionalString(refund.status) ?? 'DEVOLVIDO'
        return {
          id: `efi:${endToEndId}:${refundId}:${status}`,
          type: status === 'DEVOLVIDO' ? 'payment.updated' : `devolucao_${status.toLowerCase()}`,
          provider,
          raw: entry,
          occurredAt: isoDate(refund.horario?.liquidacao ?? refund.horario?.solicitacao),
          data: {
            ...common,
            refunds: [{ id: refundId, amount: toMinorUnits(refund.valor, 'BRL') }],
          },
        }
      })
    })
  }
}
