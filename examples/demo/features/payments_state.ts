import { generateKeyPairSync } from 'node:crypto'
import type { WebhookEvent } from 'adonis-atrium/payments'

/**
 * Demo-only state: a Woovi key pair made at start (the app verifies with the
 * public key, the page signs with the private one) and what handlers saw.
 */
export const wooviKeys = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
})

export const handlerLog: {
  at: string
  provider: string
  id: string
  type: string
  data: unknown
}[] = []

export function remember(event: WebhookEvent) {
  handlerLog.unshift({
    at: new Date().toISOString(),
    provider: event.provider,
    id: event.id,
    type: event.type,
    data: event.data,
  })
  handlerLog.length = Math.min(handlerLog.length, 30)
}
