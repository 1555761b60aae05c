/**
 * Mercado Pago notifications signed with the documented manifest written out
 * here (hex HMAC-SHA256 of `id:<data.id>;request-id:<x-request-id>;ts:<ts>;`),
 * never with Atrium's own signer, and a driver reading a loopback API.
 */
import { createHmac } from 'node:crypto'
import { MercadoPagoDriver } from '../../src/payments/drivers/mercadopago.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'
import { mercadoPagoStandIn } from './stand_ins.ts'

export const SECRET = 'mp-independent-webhook-secret'
export const TOKEN = 'APP_USR-independent-token'

export interface Notice {
  dataId: string
  body?: Record<string, unknown> | string
  requestId?: string
  ts?: string
  /** The data.id as signed (Mercado Pago lowercases alphanumeric ids) */
  signedId?: string
  secret?: string
}

export function notification(notice: Notice): WebhookRequest {
  const ts = notice.ts ?? String(Math.floor(Date.now() / 1000))
  const requestId = notice.requestId ?? 'bb56a2f1-6aae-46ac-982e-9dcd3581d08e'
  const signedId = notice.signedId ?? notice.dataId
  const manifest = `id:${signedId};${requestId ? `request-id:${requestId};` : ''}ts:${ts};`
  const v1 = createHmac('sha256', notice.secret ?? SECRET)
    .update(manifest)
    .digest('hex')
  const body =
    typeof notice.body === 'string'
      ? notice.body
      : JSON.stringify(notice.body ?? { type: 'payment', data: { id: notice.dataId } })
  const headers: Record<string, string> = { 'x-signature': `ts=${ts},v1=${v1}` }
  if (requestId) headers['x-request-id'] = requestId
  return { rawBody: Buffer.from(body), headers, query: { 'data.id': notice.dataId } }
}

export async function setup(options: Record<string, unknown> = {}) {
  const api = await mercadoPagoStandIn(TOKEN)
  const driver = new MercadoPagoDriver({
    webhookSecret: SECRET,
    accessToken: TOKEN,
    apiBaseUrl: `${api.url}//`,
    ...options,
  })
  const deliver = async (notice: Notice) => {
    const request = notification(notice)
    await driver.confirm(request)
    return driver.parse(request, 'mercadopago')
  }
  const payment = (id: string, changes: Record<string, unknown> = {}) => {
    const resource = {
      id: Number(id),
      status: 'approved',
      status_detail: 'accredited',
      transaction_amount: 129.9,
      transaction_amount_refunded: 0,
      currency_id: 'BRL',
      external_reference: 'order-1',
      date_approved: '2026-11-20T09:00:00.000-03:00',
      date_last_updated: '2026-11-20T10:00:00.000-03:00',
      payer: { id: 123 },
      ...changes,
    }
    api.set(`/v1/payments/${id}`, resource)
    return deliver({
      dataId: id,
      body: { type: 'payment', action: 'payment.updated', data: { id } },
    })
  }
  return { api, driver, deliver, payment }
}
