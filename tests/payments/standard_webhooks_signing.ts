/**
 * Standard Webhooks deliveries for Polar and Dodo Payments, signed with the
 * specification's formula written out here (base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<raw body>`), never with Atrium's own signer.
 */
import { createHmac } from 'node:crypto'
import { DodoPaymentsDriver } from '../../src/payments/drivers/dodopayments.ts'
import { PolarDriver } from '../../src/payments/drivers/polar.ts'
import type { WebhookRequest } from '../../src/payments/types.ts'

export const POLAR_SECRET = 'polar_whs_independent_secret'
export const DODO_KEY = Buffer.from('an-independent-dodo-test-key-32b')
export const DODO_SECRET = `whsec_${DODO_KEY.toString('base64')}`
export const NOW = '2026-11-20T10:00:00.000Z'

/** Polar keys the HMAC with its secret's UTF-8 bytes; Dodo with the base64 after `whsec_` */
export const KEYS = { polar: Buffer.from(POLAR_SECRET, 'utf8'), dodo: DODO_KEY }

export function signed(
  key: Buffer,
  body: string,
  options: { id?: string; timestamp?: string; signature?: string } = {}
): WebhookRequest {
  const id = options.id ?? 'msg_01'
  const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000))
  const digest = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
  return {
    rawBody: Buffer.from(body),
    headers: {
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': options.signature ?? `v1,${digest}`,
    },
    query: {},
  }
}

export const polar = new PolarDriver({ webhookSecret: POLAR_SECRET })
export const dodo = new DodoPaymentsDriver({ webhookSecret: DODO_SECRET })
export const toPolar = (type: string, data: unknown) =>
  polar.parse(signed(KEYS.polar, JSON.stringify({ type, timestamp: NOW, data })), 'polar')
export const toDodo = (type: string, data: unknown) =>
  dodo.parse(signed(KEYS.dodo, JSON.stringify({ type, timestamp: NOW, data })), 'dodo')
