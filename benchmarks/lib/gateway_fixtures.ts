/**
 * Every gateway the payments benchmarks drive, in one list: the provider as
 * the app configures it, the credentials `signedWebhook` signs with (and
 * well-formed wrong ones), and a delivery of a succeeded payment. The route
 * table, the fuzz run and the load generator all iterate over it; a new
 * gateway joins them by adding one entry here.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { generateKeyPairSync } from 'node:crypto'
import { gateways } from '../../src/payments/main.ts'
import type { GatewayFactory } from '../../src/payments/types.ts'
import type { SigningCredentials } from '../../src/payments/testing.ts'
import { FIXTURES } from '../../tests/payments/fixtures.ts'
import { HMAC_GATEWAY_FIXTURES } from '../../tests/payments/hmac_gateway_fixtures.ts'
import {
  PAYPAL_CERT,
  SECRETS,
  dodo,
  mollie,
  paddle,
  paypal,
  polar,
} from '../../tests/payments/sdk_gateway_fixtures.ts'
import { makeCertificate } from '../../tests/payments/sdk_gateway_stand_ins.ts'
import { PAYPAL_TEST_CERTIFICATE_ORIGIN } from '../../src/payments/testing.ts'

export interface BenchGatewayFixture {
  /** The `:provider` segment and the driver name */
  name: string
  /** The provider as config/payments.ts declares it; `api` is the gateway API stand-in's URL */
  provider(api: string): GatewayFactory<any>
  /**
   * What `signedWebhook` signs a delivery with (called in the parent process
   * only); `api` is the gateway API stand-in's URL, where PayPal's certificate is
   */
  credentials(api: string): SigningCredentials
  /** Well-formed credentials that are not the app's */
  wrongCredentials(api: string): SigningCredentials
  /** A delivery of one succeeded payment, unique per `id` */
  payload(id: string): unknown
}

let wooviKeys: { publicKey: string; privateKey: string } | undefined
function woovi() {
  wooviKeys ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  })
  return wooviKeys
}

const SQUARE_URL = 'https://shop.example/payments/webhook/square'

/** PayPal's certificate path on the gateway API stand-in, which serves PAYPAL_CERT */
const PAYPAL_CERT_PATH = '/v1/notifications/certs/CERT-bench'
/** A key PayPal's certificate does not match, made on first use */
let paypalWrongKey: string | undefined

export const GATEWAY_FIXTURES: BenchGatewayFixture[] = [
  {
    name: 'stripe',
    provider: () => gateways.stripe({ webhookSecret: 'whsec_bench' }),
    credentials: () => ({ webhookSecret: 'whsec_bench' }),
    wrongCredentials: () => ({ webhookSecret: 'whsec_wrong' }),
    payload: FIXTURES.stripe.payload,
  },
  {
    name: 'abacatepay',
    provider: () => gateways.abacatepay({ webhookSecret: 'abacate-url', publicKey: 'abacate-key' }),
    credentials: () => ({ webhookSecret: 'abacate-url', publicKey: 'abacate-key' }),
    wrongCredentials: () => ({ webhookSecret: 'abacate-url', publicKey: 'not-the-key' }),
    payload: FIXTURES.abacatepay.payload,
  },
  {
    name: 'asaas',
    provider: () => gateways.asaas({ webhookToken: 'asaas-bench-token' }),
    credentials: () => ({ webhookToken: 'asaas-bench-token' }),
    wrongCredentials: () => ({ webhookToken: 'wrong-token' }),
    payload: FIXTURES.asaas.payload,
  },
  {
    name: 'woovi',
    provider: () => gateways.woovi({ webhookPublicKey: woovi().publicKey }),
    credentials: () => ({ privateKey: woovi().privateKey }),
    wrongCredentials: () => ({ webhookSecret: 'not-the-woovi-secret' }),
    payload: FIXTURES.woovi.payload,
  },
  {
    name: 'pagbank',
    provider: () => gateways.pagbank({ webhookToken: 'pagbank-bench-token' }),
    credentials: () => ({ webhookToken: 'pagbank-bench-token' }),
    wrongCredentials: () => ({ webhookToken: 'wrong-token' }),
    payload: FIXTURES.pagbank.payload,
  },
  {
    name: 'adyen',
    provider: () => gateways.adyen({ hmacKey: 'AB'.repeat(32) }),
    credentials: () => ({ hmacKey: 'AB'.repeat(32) }),
    wrongCredentials: () => ({ hmacKey: 'CD'.repeat(32) }),
    payload: FIXTURES.adyen.payload,
  },
  {
    name: 'efi',
    provider: () => gateways.efi({ webhookHmac: 'efi-bench-hmac' }),
    credentials: () => ({ webhookHmac: 'efi-bench-hmac' }),
    wrongCredentials: () => ({ webhookHmac: 'not-the-hmac' }),
    payload: FIXTURES.efi.payload,
  },
  {
    name: 'infinitepay',
    provider: (api) => gateways.infinitepay({ handle: 'atrium-bench', apiBaseUrl: api }),
    credentials: () => ({}),
    wrongCredentials: () => ({}),
    payload: FIXTURES.infinitepay.payload,
  },
  {
    name: 'lemonsqueezy',
    provider: () => gateways.lemonsqueezy({ signingSecret: 'lemon-bench-secret' }),
    credentials: () => ({ webhookSecret: 'lemon-bench-secret' }),
    wrongCredentials: () => ({ webhookSecret: 'not-the-signing-secret' }),
    payload: HMAC_GATEWAY_FIXTURES.lemonsqueezy.payload,
  },
  {
    name: 'mercadopago',
    provider: (api) =>
      gateways.mercadopago({
        webhookSecret: 'mp-bench-secret',
        accessToken: 'APP_USR-bench',
        apiBaseUrl: api,
      }),
    credentials: () => ({ webhookSecret: 'mp-bench-secret' }),
    wrongCredentials: () => ({ webhookSecret: 'not-the-webhook-secret' }),
    payload: HMAC_GATEWAY_FIXTURES.mercadopago.payload,
  },
  {
    name: 'pagarme',
    provider: () => gateways.pagarme({ secretKey: 'sk_bench_pagarme' }),
    credentials: () => ({ secretKey: 'sk_bench_pagarme' }),
    wrongCredentials: () => ({ secretKey: 'sk_bench_wrong' }),
    payload: HMAC_GATEWAY_FIXTURES.pagarme.payload,
  },
  {
    name: 'razorpay',
    provider: () => gateways.razorpay({ webhookSecret: 'razorpay-bench-secret' }),
    credentials: () => ({ webhookSecret: 'razorpay-bench-secret' }),
    wrongCredentials: () => ({ webhookSecret: 'not-the-webhook-secret' }),
    payload: HMAC_GATEWAY_FIXTURES.razorpay.payload,
  },
  {
    name: 'square',
    provider: () =>
      gateways.square({ signatureKey: 'square-bench-key', notificationUrl: SQUARE_URL }),
    credentials: () => ({ signatureKey: 'square-bench-key', notificationUrl: SQUARE_URL }),
    wrongCredentials: () => ({
      signatureKey: 'not-the-signature-key',
      notificationUrl: SQUARE_URL,
    }),
    payload: HMAC_GATEWAY_FIXTURES.square.payload,
  },
  {
    name: 'paddle',
    provider: () => gateways.paddle({ webhookSecret: SECRETS.paddle }),
    credentials: () => ({ webhookSecret: SECRETS.paddle }),
    wrongCredentials: () => ({ webhookSecret: 'pdl_ntfset_01notthesecret' }),
    payload: (id) => paddle.transaction(id),
  },
  {
    name: 'polar',
    provider: () => gateways.polar({ webhookSecret: SECRETS.polar }),
    credentials: () => ({ webhookSecret: SECRETS.polar }),
    wrongCredentials: () => ({ webhookSecret: 'polar_whs_not_the_secret' }),
    payload: (id) => polar.order(id),
  },
  {
    name: 'dodopayments',
    provider: () => gateways.dodopayments({ webhookSecret: SECRETS.dodopayments }),
    credentials: () => ({ webhookSecret: SECRETS.dodopayments }),
    wrongCredentials: () => ({
      webhookSecret: `whsec_${Buffer.from('not-the-dodo-payments-key-32byte').toString('base64')}`,
    }),
    payload: (id) => dodo.payment(id),
  },
  {
    // verified offline against the certificate the API stand-in serves
    name: 'paypal',
    provider: (api) =>
      gateways.paypal({
        webhookId: SECRETS.paypalWebhookId,
        [PAYPAL_TEST_CERTIFICATE_ORIGIN]: api,
      } as any),
    credentials: (api) => ({
      privateKey: PAYPAL_CERT.privateKey,
      certUrl: `${api}${PAYPAL_CERT_PATH}`,
      webhookId: SECRETS.paypalWebhookId,
    }),
    wrongCredentials: (api) => {
      paypalWrongKey ??= makeCertificate().privateKey
      return {
        privateKey: paypalWrongKey,
        certUrl: `${api}${PAYPAL_CERT_PATH}`,
        webhookId: SECRETS.paypalWebhookId,
      }
    },
    payload: (id) => paypal.capture(id),
  },
  {
    // the signed (next-gen) webhook: the classic id-only one asks Mollie's API each time
    name: 'mollie',
    provider: () => gateways.mollie({ webhookSecret: SECRETS.mollie }),
    credentials: () => ({ webhookSecret: SECRETS.mollie }),
    wrongCredentials: () => ({ webhookSecret: 'not-the-mollie-signing-secret' }),
    payload: (id) => mollie.linkPaid(id),
  },
]

export function gatewayFixture(name: string): BenchGatewayFixture {
  const fixture = GATEWAY_FIXTURES.find((entry) => entry.name === name)
  if (!fixture) throw new Error(`No gateway fixture named "${name}"`)
  return fixture
}

/** Every fixture's provider, keyed by its name */
export function fixtureProviders(api: string) {
  return Object.fromEntries(GATEWAY_FIXTURES.map((entry) => [entry.name, entry.provider(api)]))
}

/**
 * The gateway APIs the drivers read (benchmarks/lib/gateway_api.ts), in a
 * child process as the real ones are elsewhere: their work is not the app's.
 */
export async function gatewayApiStandIn(options: { paid: boolean }) {
  const script = fileURLToPath(new URL('./gateway_api.ts', import.meta.url))
  const child = spawn(
    process.execPath,
    ['--import=@poppinss/ts-exec', script, options.paid ? 'paid' : 'unpaid'],
    {
      // its stdin closes when this process ends, however it ends, and the stand-in exits then
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, PAYPAL_CERTIFICATE: PAYPAL_CERT.certificate },
    }
  )
  const url = await new Promise<string>((resolve, reject) => {
    let output = ''
    child.on('error', reject)
    child.on('exit', (code) => reject(new Error(`gateway API stand-in exited with ${code}`)))
    child.stdout.on('data', (chunk) => {
      output += chunk
      if (output.includes('\n')) resolve(output.split('\n')[0].trim())
    })
  })
  return {
    url,
    pid: child.pid!,
    close: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners('exit')
        child.once('exit', () => resolve())
        child.kill()
      }),
  }
}
