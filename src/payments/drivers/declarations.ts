import type { WebhookVerification } from '../types.ts'

/**
 * What each gateway declares once: the options that hold its credential,
 * the env variables a host sets for them, and the optional packages its
 * driver imports. `defineConfig` (without loading the driver) and the
 * driver itself both derive their verification state and messages from it,
 * so the two cannot drift.
 */
export interface GatewayDeclaration {
  /** Option names that hold the credential */
  credentials: string[]
  /** `all`: every credential is needed; `any`: one of them suffices */
  needs: 'all' | 'any'
  /** How the credential reads in messages */
  credential: string
  /** The env variable(s) a host sets for it */
  env: string
  /** What the gateway is without a credential: verifiable but unset, or nothing to verify */
  withoutCredential: 'unconfigured' | 'unsupported'
  /** Optional packages the driver imports, checked at boot */
  packages: string[]
}

function declare(
  credentials: string[],
  env: string,
  extra: Partial<Omit<GatewayDeclaration, 'credentials' | 'env'>> = {}
): GatewayDeclaration {
  return {
    credentials,
    env,
    needs: 'all',
    credential: credentials.join(' and '),
    withoutCredential: 'unconfigured',
    packages: [],
    ...extra,
  }
}

export const GATEWAY_DECLARATIONS = {
  stripe: declare(['webhookSecret'], 'STRIPE_WEBHOOK_SECRET', { packages: ['stripe'] }),
  abacatepay: declare(
    ['webhookSecret', 'publicKey'],
    'ABACATEPAY_WEBHOOK_SECRET and ABACATEPAY_PUBLIC_KEY'
  ),
  asaas: declare(['webhookToken'], 'ASAAS_WEBHOOK_TOKEN'),
  woovi: declare(['webhookPublicKey', 'webhookSecret'], 'WOOVI_WEBHOOK_PUBLIC_KEY', {
    needs: 'any',
    credential: 'webhookPublicKey',
  }),
  pagbank: declare(['webhookToken', 'token', 'publicKey'], 'PAGBANK_WEBHOOK_TOKEN', {
    needs: 'any',
    credential: 'webhookToken',
  }),
  adyen: declare(['hmacKey'], 'ADYEN_HMAC_KEY'),
  // Without the hmac parameter only mutual TLS in front of the app can vouch for Efí
  efi: declare(['webhookHmac'], 'EFI_WEBHOOK_HMAC', { withoutCredential: 'unsupported' }),
  infinitepay: declare(['handle'], 'INFINITEPAY_HANDLE'),
  paddle: declare(['webhookSecret'], 'PADDLE_WEBHOOK_SECRET', {
    packages: ['@paddle/paddle-node-sdk'],
  }),
  polar: declare(['webhookSecret'], 'POLAR_WEBHOOK_SECRET', { packages: ['standardwebhooks'] }),
  dodopayments: declare(['webhookSecret'], 'DODO_PAYMENTS_WEBHOOK_KEY', {
    packages: ['standardwebhooks'],
  }),
  paypal: declare(['webhookId'], 'PAYPAL_WEBHOOK_ID'),
  // Signed next-gen webhooks need the secret; classic id-only ones the API key to fetch with
  mollie: declare(['webhookSecret', 'apiKey'], 'MOLLIE_WEBHOOK_SECRET or MOLLIE_API_KEY', {
    needs: 'any',
    credential: 'webhookSecret or apiKey',
    packages: ['@mollie/api-client'],
  }),
  fake: declare(['secret'], 'FAKE_WEBHOOK_SECRET'),
  lemonsqueezy: declare(['signingSecret'], 'LEMONSQUEEZY_WEBHOOK_SECRET'),
  // The access token reads the notified resource: Mercado Pago signs its id, not the body
  mercadopago: declare(
    ['webhookSecret', 'accessToken'],
    'MERCADOPAGO_WEBHOOK_SECRET and MERCADOPAGO_ACCESS_TOKEN'
  ),
  pagarme: declare(['secretKey'], 'PAGARME_SECRET_KEY'),
  razorpay: declare(['webhookSecret'], 'RAZORPAY_WEBHOOK_SECRET'),
  square: declare(
    ['signatureKey', 'notificationUrl'],
    'SQUARE_WEBHOOK_SIGNATURE_KEY and SQUARE_WEBHOOK_URL'
  ),
} satisfies Record<string, GatewayDeclaration>

export type GatewayName = keyof typeof GATEWAY_DECLARATIONS

/**
 * The verification state a declaration gives the options a host set.
 */
export function verificationOf(
  declaration: GatewayDeclaration,
  options: object
): WebhookVerification {
  const set = declaration.credentials.map((key) => !!(options as Record<string, unknown>)[key])
  const verifies = declaration.needs === 'all' ? set.every(Boolean) : set.some(Boolean)
  return verifies ? 'configured' : declaration.withoutCredential
}
