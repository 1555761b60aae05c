import { reject } from '../errors.ts'
import { toMinorUnits } from '../money.ts'
import type { PaymentDriver, WebhookEvent, WebhookRequest } from '../types.ts'
import { isObject, isoDate, jsonObject, optionalString, requiredString } from './helpers.ts'

export interface EfiGatewayOptions {}

/**
 * True when a reference can be Efí's Pix `txid`: 26 to 35 alphanumerics.
 */
export function isEfiTxid(value: unknown): value is string {
  return typeof value === 'string' && /^[a-zA-Z0-9]{26,35}$/.test(value)
}

/**
 * Gateway G, Efí (Pix): no signature. Efí authenticates with mutual TLS or
 * an `hmac` query parameter, both enforced outside the driver (proxy or
 * route middleware). A delivery is a `pix[]` batch; refunds arrive as
 * `devolucoes` on the original Pix.
 */
export class EfiDriver implements PaymentDriver {
  readonly name = 'efi'
  readonly credentialHint = 'none (mTLS or the hmac query parameter, outside the driver)'
  readonly subscribedEvents = ['pix']
  readonly webhookVerification = 'unsupported' as const

  constructor(public options: EfiGatewayOptions = {}) {}

  parse(request: WebhookRequest, provider: string): WebhookEvent[] {
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
