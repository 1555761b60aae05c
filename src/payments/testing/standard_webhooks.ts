import { createHmac, randomUUID } from 'node:crypto'

/**
 * Headers of a Standard Webhooks delivery: `v1,<base64 HMAC-SHA256>` of
 * `<webhook-id>.<webhook-timestamp>.<body>` keyed with `key`.
 */
export function standardWebhookHeaders(
  body: string,
  key: Buffer,
  options: { messageId?: string; timestamp?: number } = {}
) {
  const id = options.messageId ?? `msg_${randomUUID().replaceAll('-', '')}`
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000)
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${signature}`,
  }
}

/** Polar keys the HMAC with the secret's own UTF-8 bytes */
export function polarKey(secret: string) {
  return Buffer.from(secret, 'utf8')
}

/** A `whsec_<base64>` secret (Dodo Payments, Svix) keys it with the decoded bytes */
export function whsecKey(secret: string) {
  return Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
}
