/**
 * `signedWebhook` for the gateways that sign with an HMAC keyed by a shared
 * secret: Lemon Squeezy, Mercado Pago (over its manifest), Pagar.me, Razorpay
 * and Square (over the notification URL and the body).
 */
import { createHmac, randomUUID } from 'node:crypto'
import { mercadoPagoManifest } from '../drivers/mercadopago.ts'
import type { SignedWebhook, SigningCredentials } from '../testing.ts'

const json = { 'content-type': 'application/json' }

function text(payload: unknown) {
  return typeof payload === 'string' ? payload : JSON.stringify(payload)
}

function required(value: string | undefined, name: string): string {
  if (!value) {
    throw new Error(`signedWebhook needs credentials.${name}`)
  }
  return value
}

/**
 * Lemon Squeezy: `X-Signature`, the hex HMAC-SHA256 of the body; the event
 * name also travels in `X-Event-Name`.
 */
export function signLemonSqueezy(payload: unknown, credentials: SigningCredentials): SignedWebhook {
  const body = text(payload)
  const signature = createHmac('sha256', required(credentials.webhookSecret, 'webhookSecret'))
    .update(body)
    .digest('hex')
  const name = (JSON.parse(body) as any)?.meta?.event_name
  return {
    body,
    headers: {
      ...json,
      'x-signature': signature,
      ...(typeof name === 'string' ? { 'x-event-name': name } : {}),
    },
  }
}

/**
 * Mercado Pago: `x-signature` signs `data.id` (sent as the `data.id` query
 * parameter), `x-request-id` and the timestamp, not the body.
 */
export function signMercadoPago(payload: unknown, credentials: SigningCredentials): SignedWebhook {
  const body = text(payload)
  const dataId = String((JSON.parse(body) as any)?.data?.id ?? '')
  const requestId = credentials.requestId ?? randomUUID()
  const ts = String(credentials.timestamp ?? Math.floor(Date.now() / 1000))
  const signature = createHmac('sha256', required(credentials.webhookSecret, 'webhookSecret'))
    .update(mercadoPagoManifest(dataId, requestId, ts))
    .digest('hex')
  const type = String((JSON.parse(body) as any)?.type ?? '')
  return {
    body,
    headers: { ...json, 'x-signature': `ts=${ts},v1=${signature}`, 'x-request-id': requestId },
    query: { 'data.id': dataId, 'type': type },
  }
}

/** Pagar.me: `X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body>` keyed with the secret key */
export function signPagarme(payload: unknown, credentials: SigningCredentials): SignedWebhook {
  const body = text(payload)
  const signature = createHmac('sha1', required(credentials.secretKey, 'secretKey'))
    .update(body)
    .digest('hex')
  return { body, headers: { ...json, 'x-hub-signature': `sha1=${signature}` } }
}

/** Razorpay: `X-Razorpay-Signature`, the hex HMAC-SHA256 of the body */
export function signRazorpay(payload: unknown, credentials: SigningCredentials): SignedWebhook {
  const body = text(payload)
  const signature = createHmac('sha256', required(credentials.webhookSecret, 'webhookSecret'))
    .update(body)
    .digest('hex')
  return {
    body,
    headers: { ...json, 'x-razorpay-signature': signature, 'x-razorpay-event-id': randomUUID() },
  }
}

/** Square: `x-square-hmacsha256-signature`, the base64 HMAC-SHA256 of notification URL + body */
export function signSquare(payload: unknown, credentials: SigningCredentials): SignedWebhook {
  const body = text(payload)
  const signature = createHmac('sha256', required(credentials.signatureKey, 'signatureKey'))
    .update(required(credentials.notificationUrl, 'notificationUrl') + body)
    .digest('base64')
  return { body, headers: { ...json, 'x-square-hmacsha256-signature': signature } }
}
