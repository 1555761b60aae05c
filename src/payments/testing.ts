import { createHash, createHmac, createSign, type KeyLike } from 'node:crypto'
import { adyenItemSignature } from './drivers/adyen.ts'

export interface SignedWebhook {
  /** The exact bytes to post */
  body: string
  headers: Record<string, string>
  /** Query parameters the gateway adds to the URL (AbacatePay's webhookSecret) */
  query?: Record<string, string>
}

export interface SigningCredentials {
  /** Stripe `whsec_`, AbacatePay `webhookSecret`, Woovi deprecated HMAC secret, fake secret */
  webhookSecret?: string
  /** AbacatePay's HMAC public key */
  publicKey?: string
  /** Woovi: the RSA private key matching `webhookPublicKey`; PagBank: the EC key for `x-payload-signature` */
  privateKey?: KeyLike
  /** Efí: the `hmac` query parameter of the registered webhook URL */
  webhookHmac?: string
  /** Asaas access token, PagBank token */
  webhookToken?: string
  /** Adyen hex HMAC key */
  hmacKey?: string
  /** Stripe: seconds since epoch of the signature (default now) */
  timestamp?: number
}

function text(payload: unknown) {
  return typeof payload === 'string' ? payload : JSON.stringify(payload)
}

/**
 * Builds the body and headers a gateway would send, signed as that gateway
 * signs, so an app's tests can post a real delivery to its webhook route:
 *
 * ```ts
 * const { body, headers } = signedWebhook('stripe', event, { webhookSecret })
 * await client.post('/payments/webhook/stripe').headers(headers).json(JSON.parse(body))
 * ```
 * Post `body` as is (not re-serialized) when it is a string you formatted.
 * Adyen payloads are signed item by item (the items' signatures are set here).
 */
export function signedWebhook(
  driver: string,
  payload: unknown,
  credentials: SigningCredentials = {}
): SignedWebhook {
  const json = { 'content-type': 'application/json' }
  switch (driver) {
    case 'stripe': {
      const body = text(payload)
      const timestamp = credentials.timestamp ?? Math.floor(Date.now() / 1000)
      const signature = createHmac('sha256', required(credentials.webhookSecret, 'webhookSecret'))
        .update(`${timestamp}.${body}`)
        .digest('hex')
      return { body, headers: { ...json, 'stripe-signature': `t=${timestamp},v1=${signature}` } }
    }
    case 'abacatepay': {
      const body = text(payload)
      const signature = createHmac('sha256', required(credentials.publicKey, 'publicKey'))
        .update(body)
        .digest('base64')
      return {
        body,
        headers: { ...json, 'x-webhook-signature': signature },
        query: { webhookSecret: required(credentials.webhookSecret, 'webhookSecret') },
      }
    }
    case 'asaas':
      return {
        body: text(payload),
        headers: {
          ...json,
          'asaas-access-token': required(credentials.webhookToken, 'webhookToken'),
        },
      }
    case 'woovi': {
      const body = text(payload)
      if (credentials.privateKey) {
        const signer = createSign('RSA-SHA256')
        signer.update(body)
        return {
          body,
          headers: {
            ...json,
            'x-webhook-signature': signer.sign(credentials.privateKey, 'base64'),
          },
        }
      }
      const signature = createHmac('sha1', required(credentials.webhookSecret, 'webhookSecret'))
        .update(body)
        .digest('base64')
      return { body, headers: { ...json, 'x-openpix-signature': signature } }
    }
    case 'pagbank': {
      const body = text(payload)
      if (credentials.privateKey) {
        const signature = createSign('sha256').update(body).sign(credentials.privateKey, 'base64')
        return { body, headers: { ...json, 'x-payload-signature': signature } }
      }
      const token = required(credentials.webhookToken, 'webhookToken')
      return {
        body,
        headers: {
          ...json,
          'x-authenticity-token': createHash('sha256').update(`${token}-${body}`).digest('hex'),
        },
      }
    }
    case 'adyen': {
      const key = required(credentials.hmacKey, 'hmacKey')
      const notification = (
        typeof payload === 'string' ? JSON.parse(payload) : structuredClone(payload)
      ) as { notificationItems: any[] }
      for (const entry of notification.notificationItems ?? []) {
        const item = entry.NotificationRequestItem
        item.additionalData = {
          ...item.additionalData,
          hmacSignature: adyenItemSignature(item, key),
        }
      }
      return { body: JSON.stringify(notification), headers: json }
    }
    case 'efi':
      return {
        body: text(payload),
        headers: json,
        ...(credentials.webhookHmac ? { query: { hmac: credentials.webhookHmac } } : {}),
      }
    case 'infinitepay':
      // Unsigned: the app confirms it through InfinitePay's payment check
      return { body: text(payload), headers: json }
    case 'fake': {
      const body = text(payload)
      const signature = createHmac('sha256', required(credentials.webhookSecret, 'webhookSecret'))
        .update(body)
        .digest('hex')
      return { body, headers: { ...json, 'x-fake-signature': signature } }
    }
    default:
      throw new Error(`signedWebhook does not know the "${driver}" driver`)
  }
}

function required(value: string | undefined, name: string): string {
  if (!value) {
    throw new Error(`signedWebhook needs credentials.${name}`)
  }
  return value
}
