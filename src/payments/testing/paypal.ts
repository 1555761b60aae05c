import { createSign, randomUUID, type KeyLike } from 'node:crypto'
import { paypalSignedMessage } from '../drivers/paypal.ts'

export { PAYPAL_TEST_CERTIFICATE_ORIGIN } from '../drivers/paypal_certificates.ts'

/**
 * The transmission headers PayPal sends: an RSA-SHA256 signature of
 * `<id>|<time>|<webhook id>|<crc32(body)>` with the key of the certificate at `certUrl`.
 */
export function paypalHeaders(
  body: string,
  credentials: {
    privateKey: KeyLike
    certUrl: string
    webhookId: string
    transmissionId?: string
    timestamp?: number
  }
) {
  const id = credentials.transmissionId ?? randomUUID()
  const time = new Date((credentials.timestamp ?? Date.now() / 1000) * 1000).toISOString()
  const signature = createSign('RSA-SHA256')
    .update(paypalSignedMessage(id, time, credentials.webhookId, body))
    .sign(credentials.privateKey, 'base64')
  return {
    'paypal-transmission-id': id,
    'paypal-transmission-time': time,
    'paypal-transmission-sig': signature,
    'paypal-cert-url': credentials.certUrl,
    'paypal-auth-algo': 'SHA256withRSA',
  }
}
