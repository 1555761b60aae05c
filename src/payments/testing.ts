import { createHash, createHmac, createSign, type KeyLike } from 'node:crypto'
import { adyenItemSignature } from './drivers/adyen.ts'
import { mollieClassicBody, mollieSignature } from './testing/mollie.ts'
import { paddleSignature } from './testing/paddle.ts'
import { paypalHeaders } from './testing/paypal.ts'
import { polarKey, standardWebhookHeaders, whsecKey } from './testing/standard_webhooks.ts'

export { PAYPAL_TEST_CERTIFICATE_ORIGIN } from './testing/paypal.ts'
import {
  signLemonSqueezy,
  signMercadoPago,
  signPagarme,
  signRazorpay,
  signSquare,
} from './testing/hmac_gateways.ts'

export interface SignedWebhook {
  /** The exact bytes to post */
  body: string
  headers: Record<string, string>
  /** Query parameters the gateway adds to the URL (AbacatePay's webhookSecret) */
  query?: Record<string, string>
}

export interface SigningCredentials {
  /**
   * Stripe `whsec_`, AbacatePay `webhookSecret`, Woovi deprecated HMAC secret, Paddle, Polar and
   * Dodo Payments endpoint secrets, Mollie's next-gen signing secret (without it a Mollie
   * delivery is the classic `id=tr_...` form), Lemon Squeezy signing secret, Mercado Pago and
   * Razorpay webhook secret, fake secret
   */
  webhookSecret?: string
  /** AbacatePay's HMAC public key */
  publicKey?: string
  /**
   * Woovi: the RSA private key matching `webhookPublicKey`; PagBank: the EC key for
   * `x-payload-signature`; PayPal: the key of the certificate at `certUrl`
   */
  privateKey?: KeyLike
  /** Efí: the `hmac` query parameter of the registered webhook URL */
  webhookHmac?: string
  /** Asaas access token, PagBank token */
  webhookToken?: string
  /** Adyen hex HMAC key */
  hmacKey?: string
  /** Stripe, Paddle, Polar, Dodo Payments, PayPal, Mercado Pago: seconds since epoch of the signature (default now) */
  timestamp?: number
  /** Polar, Dodo Payments: the `webhook-id` (default a random `msg_` id) */
  messageId?: string
  /** PayPal: the webhook's id, part of the signed message */
  webhookId?: string
  /** PayPal: the `paypal-cert-url` of the certificate matching `privateKey` */
  certUrl?: string
  /** PayPal: the `paypal-transmission-id` (default a random UUID) */
  transmissionId?: string
  /** Mercado Pago: the `x-request-id` header (default a random UUID) */
  requestId?: string
  /** Pagar.me: the account's secret key */
  secretKey?: string
  /** Square: the subscription's signature key and the notification URL it signs */
  signatureKey?: string
  notificationUrl?: string
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
    case 'paddle':
      return signed(payload, (body) => ({
        'paddle-signature': paddleSignature(
          body,
          need(credentials, 'webhookSecret'),
          credentials.timestamp
        ),
      }))
    case 'polar':
      return signed(payload, (body) =>
        standardWebhookHeaders(body, polarKey(need(credentials, 'webhookSecret')), credentials)
      )
    case 'dodopayments':
      return signed(payload, (body) =>
        standardWebhookHeaders(body, whsecKey(need(credentials, 'webhookSecret')), credentials)
      )
    case 'paypal':
      return signed(payload, (body) =>
        paypalHeaders(body, {
          ...credentials,
          privateKey: need(credentials, 'privateKey'),
          certUrl: need(credentials, 'certUrl'),
          webhookId: need(credentials, 'webhookId'),
        })
      )
    case 'mollie':
      return credentials.webhookSecret
        ? signed(payload, (body) => ({
            'x-mollie-signature': mollieSignature(body, credentials.webhookSecret!),
          }))
        : {
            body: mollieClassicBody(payload),
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          }
    case 'fake': {
      const body = text(payload)
      const signature = createHmac('sha256', required(credentials.webhookSecret, 'webhookSecret'))
        .update(body)
        .digest('hex')
      return { body, headers: { ...json, 'x-fake-signature': signature } }
    }
    case 'lemonsqueezy':
      return signLemonSqueezy(payload, credentials)
    case 'mercadopago':
      return signMercadoPago(payload, credentials)
    case 'pagarme':
      return signPagarme(payload, credentials)
    case 'razorpay':
      return signRazorpay(payload, credentials)
    case 'square':
      return signSquare(payload, credentials)
    default:
      throw new Error(`signedWebhook does not know the "${driver}" driver`)
  }
}

/** A JSON delivery whose headers are computed from its exact body */
function signed(
  payload: unknown,
  headers: (body: string) => Record<string, string>
): SignedWebhook {
  const body = text(payload)
  return { body, headers: { 'content-type': 'application/json', ...headers(body) } }
}

function need<K extends keyof SigningCredentials>(
  credentials: SigningCredentials,
  name: K
): NonNullable<SigningCredentials[K]> {
  const value = credentials[name]
  if (!value) {
    throw new Error(`signedWebhook needs credentials.${name}`)
  }
  return value as NonNullable<SigningCredentials[K]>
}

function required(value: string | undefined, name: string): string {
  if (!value) {
    throw new Error(`signedWebhook needs credentials.${name}`)
  }
  return value
}
