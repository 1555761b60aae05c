import { generateKeyPairSync } from 'node:crypto'
import { getActiveTest } from '@japa/runner'
import { defineConfig as bodyParserConfig } from '@adonisjs/core/bodyparser'
import { BodyParserMiddleware } from '@adonisjs/bodyparser/bodyparser_middleware'
import type { Router } from '@adonisjs/core/http'
import { createDatabase, setupApp } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { defineConfig, gateways } from '../../src/payments/main.ts'
import type { PaymentsConfig } from '../../src/payments/types.ts'
import { TABLES } from '../../src/payments/store.ts'
import { signedWebhook, type SignedWebhook } from '../../src/payments/testing.ts'
import { infinitePayStandIn, mercadoPagoStandIn } from './stand_ins.ts'

export const { publicKey: WOOVI_PUBLIC_KEY, privateKey: WOOVI_PRIVATE_KEY } = generateKeyPairSync(
  'rsa',
  {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }
)

/** Credentials every test app is configured with */
export const CREDENTIALS = {
  stripe: { webhookSecret: 'whsec_test_secret' },
  abacatepay: { webhookSecret: 'abacate-url-secret', publicKey: 'abacate-test-public-key' },
  asaas: { webhookToken: 'asaas-token-123' },
  woovi: { privateKey: WOOVI_PRIVATE_KEY },
  pagbank: { webhookToken: 'pagbank-token-xyz' },
  adyen: { hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' },
  efi: { webhookHmac: 'efi-hmac-value' },
  infinitepay: { handle: 'atrium-test' },
  fake: { webhookSecret: 'fake-secret' },
  lemonsqueezy: { webhookSecret: 'lemon-signing-secret' },
  mercadopago: { webhookSecret: 'mp-webhook-secret', accessToken: 'APP_USR-test-token' },
  pagarme: { secretKey: 'sk_test_pagarme' },
  razorpay: { webhookSecret: 'razorpay-webhook-secret' },
  square: {
    signatureKey: 'square-signature-key',
    notificationUrl: 'https://shop.example/payments/webhook/square',
  },
}

export function allProviders(
  options: { infinitePayApi?: string; mercadoPagoApi?: string } = {}
): PaymentsConfig['providers'] {
  return {
    stripe: gateways.stripe({ webhookSecret: CREDENTIALS.stripe.webhookSecret }),
    abacatepay: gateways.abacatepay(CREDENTIALS.abacatepay),
    asaas: gateways.asaas(CREDENTIALS.asaas),
    woovi: gateways.woovi({ webhookPublicKey: WOOVI_PUBLIC_KEY }),
    pagbank: gateways.pagbank(CREDENTIALS.pagbank),
    adyen: gateways.adyen(CREDENTIALS.adyen),
    efi: gateways.efi(CREDENTIALS.efi),
    infinitepay: gateways.infinitepay({
      ...CREDENTIALS.infinitepay,
      apiBaseUrl: options.infinitePayApi,
    }),
    fake: gateways.fake({ secret: CREDENTIALS.fake.webhookSecret }),
    lemonsqueezy: gateways.lemonsqueezy({ signingSecret: CREDENTIALS.lemonsqueezy.webhookSecret }),
    mercadopago: gateways.mercadopago({
      ...CREDENTIALS.mercadopago,
      apiBaseUrl: options.mercadoPagoApi,
    }),
    pagarme: gateways.pagarme(CREDENTIALS.pagarme),
    razorpay: gateways.razorpay(CREDENTIALS.razorpay),
    square: gateways.square(CREDENTIALS.square),
  }
}

/**
 * Creates the billing tables on the test database from the published
 * migration stubs (dropped when the test ends).
 */
export async function billingTables() {
  const db = await createDatabase()
  await migrateStubs(db, 'payments')
  getActiveTest()!.cleanup(() => dropStubTables(db, 'payments'))
  return db
}

/**
 * An app with the payments provider, the billing tables and (by default)
 * the bodyparser as a host's `start/kernel.ts` registers it.
 */
export async function paymentsApp(
  options: {
    config?: Partial<PaymentsConfig>
    bodyparser?: boolean
    routes?: (router: Router) => void
    /** Posted InfinitePay deliveries are registered as paid at the stand-in first (default true) */
    infinitePayPaid?: boolean
  } = {}
) {
  const db = await billingTables()
  const infinitepay = await infinitePayStandIn(CREDENTIALS.infinitepay.handle)
  const mercadopago = await mercadoPagoStandIn(CREDENTIALS.mercadopago.accessToken)
  const testApp = await setupApp({
    database: true,
    providers: [
      () => import('./exception_handler_provider.ts'),
      () => import('../../providers/payments_provider.ts'),
    ],
    config: {
      payments: defineConfig({
        providers: allProviders({
          infinitePayApi: infinitepay.url,
          mercadoPagoApi: mercadopago.url,
        }),
        ...options.config,
      }),
    },
    routes: (router) => {
      if (options.bodyparser !== false) {
        const config = bodyParserConfig({})
        router.use([
          async () => ({
            default: class extends BodyParserMiddleware {
              constructor() {
                super(config as any)
              }
            },
          }),
        ])
      }
      options.routes?.(router)
    },
  })
  const post = (provider: string, signed: SignedWebhook, query = signed.query) => {
    if (provider === 'infinitepay' && options.infinitePayPaid !== false) {
      // A delivery a test posts stands for a payment InfinitePay really received
      const body = safeJson(signed.body)
      if (body?.transaction_nsu) {
        infinitepay.pay(String(body.transaction_nsu), {
          order: body.order_nsu,
          slug: body.invoice_slug,
          amount: body.amount,
          paid_amount: body.paid_amount ?? body.amount,
        })
      }
    }
    const search = query ? `?${new URLSearchParams(query)}` : ''
    return fetch(`${testApp.url}/payments/webhook/${provider}${search}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    })
  }
  const deliver = (provider: keyof typeof CREDENTIALS, payload: unknown) =>
    post(provider, signedWebhook(provider, payload, CREDENTIALS[provider] as any))
  const rows = (table: keyof typeof TABLES) =>
    db.connection().from(TABLES[table]).select('*').orderBy('id', 'asc')
  return { ...testApp, db, post, deliver, rows, infinitepay, mercadopago }
}

function safeJson(text: string): Record<string, any> | undefined {
  try {
    const value = JSON.parse(text)
    return typeof value === 'object' && value !== null ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * A canonical event the fake driver accepts.
 */
export function fakeEvent(id: string, type: string, data: Record<string, unknown>) {
  return { id, type, data }
}

/**
 * The status of a response once it arrives.
 */
export async function statusOf(pending: Promise<Response> | Response) {
  const response = await pending
  return response.status
}
