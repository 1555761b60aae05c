import { execFileSync } from 'node:child_process'
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

/** The `hmac` parameter the demo registers on Efí's webhook URL */
export const EFI_DEMO_HMAC = 'demo-efi-hmac'

/** Development secrets of the gateways the demo signs for itself */
export const DEMO_SECRETS = {
  paddle: 'pdl_ntfset_atrium_demo_secret',
  polar: 'polar_whs_atrium_demo_secret',
  dodopayments: `whsec_${Buffer.from('atrium-demo-dodo-payments-key-32').toString('base64')}`,
  paypalWebhookId: 'WH-ATRIUM-DEMO',
  mollie: 'atrium_demo_mollie_signing_secret',
  lemonsqueezy: 'atrium-demo-lemon-squeezy-secret',
  mercadopago: 'atrium-demo-mercado-pago-secret',
  mercadopagoAccessToken: 'APP_USR-atrium-demo',
  pagarme: 'sk_test_atrium_demo_pagarme',
  razorpay: 'atrium-demo-razorpay-secret',
  square: 'atrium-demo-square-signature-key',
}

let paypalCertificate: { privateKey: string; certificate: string } | undefined

/**
 * The certificate the demo signs PayPal deliveries with and serves at
 * /v1/notifications/certs/CERT-atrium-demo, made by openssl on first use.
 */
export const paypalDemoCertificate = {
  get() {
    paypalCertificate ??= makeCertificate()
    return paypalCertificate
  },
  privateKey: () => paypalDemoCertificate.get().privateKey,
}

function makeCertificate() {
  const pem = execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      '-',
      '-out',
      '-',
      '-days',
      '30',
    ].concat(['-subj', '/CN=messageverificationcerts.paypal.com']),
    { stdio: ['ignore', 'pipe', 'ignore'] }
  ).toString()
  const block = (name: string) =>
    new RegExp(`-----BEGIN ${name}-----[\\s\\S]+?-----END ${name}-----\\n`).exec(pem)![0]
  return { privateKey: block('PRIVATE KEY'), certificate: block('CERTIFICATE') }
}

/** The InfiniteTag the demo checks InfinitePay payments with */
export const INFINITEPAY_DEMO_HANDLE = 'atrium-demo'

/**
 * Payments the demo's InfinitePay stand-in reports as paid, by
 * transaction_nsu: the page "pays" before it posts a delivery, so a forged
 * delivery (not paid here) is rejected as it would be by InfinitePay.
 */
export const infinitePayPaid = new Map<
  string,
  { order_nsu: string; slug: string; amount: number; paid_amount: number }
>()

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
