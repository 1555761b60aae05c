import { E_PAYMENTS_CONFIG } from './errors.ts'
import type { AbacatePayGatewayOptions } from './drivers/abacatepay.ts'
import type { AdyenGatewayOptions } from './drivers/adyen.ts'
import type { AsaasGatewayOptions } from './drivers/asaas.ts'
import type { EfiGatewayOptions } from './drivers/efi.ts'
import type { FakeGatewayOptions } from './drivers/fake.ts'
import type { InfinitePayGatewayOptions } from './drivers/infinitepay.ts'
import type { PagBankGatewayOptions } from './drivers/pagbank.ts'
import type { StripeGatewayOptions } from './drivers/stripe.ts'
import type { WooviGatewayOptions } from './drivers/woovi.ts'
import type {
  GatewayFactory,
  PaymentsConfig,
  ResolvedPaymentsConfig,
  WebhookVerification,
} from './types.ts'

export interface GatewayDescriptor<Options> extends GatewayFactory<Options> {
  /** The §3.3 verification state, known without loading the driver */
  webhookVerification: WebhookVerification
  /** The environment variable a host sets for the credential */
  env: string
}

function gateway<Options>(
  driver: string,
  options: Options,
  verification: WebhookVerification,
  credentialHint: string,
  env: string,
  resolver: () => Promise<any>
): GatewayDescriptor<Options> {
  return { driver, options, webhookVerification: verification, credentialHint, env, resolver }
}

const has = (...values: (string | undefined)[]) => values.every((value) => !!value)

/**
 * Driver factories for `config/payments.ts`. A driver's module (and the
 * `stripe` SDK) is imported only when the app boots with that provider.
 */
export const gateways = {
  stripe: (options: StripeGatewayOptions = {}) =>
    gateway(
      'stripe',
      options,
      has(options.webhookSecret) ? 'configured' : 'unconfigured',
      'webhookSecret',
      'STRIPE_WEBHOOK_SECRET',
      async () => {
        const { StripeDriver } = await import('./drivers/stripe.ts')
        return new StripeDriver(options)
      }
    ),
  abacatepay: (options: AbacatePayGatewayOptions = {}) =>
    gateway(
      'abacatepay',
      options,
      has(options.webhookSecret, options.publicKey) ? 'configured' : 'unconfigured',
      'webhookSecret and publicKey',
      'ABACATEPAY_WEBHOOK_SECRET and ABACATEPAY_PUBLIC_KEY',
      async () => {
        const { AbacatePayDriver } = await import('./drivers/abacatepay.ts')
        return new AbacatePayDriver(options)
      }
    ),
  asaas: (options: AsaasGatewayOptions = {}) =>
    gateway(
      'asaas',
      options,
      has(options.webhookToken) ? 'configured' : 'unconfigured',
      'webhookToken',
      'ASAAS_WEBHOOK_TOKEN',
      async () => {
        const { AsaasDriver } = await import('./drivers/asaas.ts')
        return new AsaasDriver(options)
      }
    ),
  woovi: (options: WooviGatewayOptions = {}) =>
    gateway(
      'woovi',
      options,
      options.webhookPublicKey || options.webhookSecret ? 'configured' : 'unconfigured',
      'webhookPublicKey',
      'WOOVI_WEBHOOK_PUBLIC_KEY',
      async () => {
        const { WooviDriver } = await import('./drivers/woovi.ts')
        return new WooviDriver(options)
      }
    ),
  pagbank: (options: PagBankGatewayOptions = {}) =>
    gateway(
      'pagbank',
      options,
      options.webhookToken || options.token ? 'configured' : 'unconfigured',
      'webhookToken',
      'PAGBANK_WEBHOOK_TOKEN',
      async () => {
        const { PagBankDriver } = await import('./drivers/pagbank.ts')
        return new PagBankDriver(options)
      }
    ),
  adyen: (options: AdyenGatewayOptions = {}) =>
    gateway(
      'adyen',
      options,
      has(options.hmacKey) ? 'configured' : 'unconfigured',
      'hmacKey',
      'ADYEN_HMAC_KEY',
      async () => {
        const { AdyenDriver } = await import('./drivers/adyen.ts')
        return new AdyenDriver(options)
      }
    ),
  efi: (options: EfiGatewayOptions = {}) =>
    gateway('efi', options, 'unsupported', 'none', 'none', async () => {
      const { EfiDriver } = await import('./drivers/efi.ts')
      return new EfiDriver(options)
    }),
  infinitepay: (options: InfinitePayGatewayOptions = {}) =>
    gateway('infinitepay', options, 'unsupported', 'none', 'none', async () => {
      const { InfinitePayDriver } = await import('./drivers/infinitepay.ts')
      return new InfinitePayDriver(options)
    }),
  fake: (options: FakeGatewayOptions = {}) =>
    gateway(
      'fake',
      options,
      has(options.secret) ? 'configured' : 'unconfigured',
      'secret',
      'FAKE_WEBHOOK_SECRET',
      async () => {
        const { FakeDriver } = await import('./drivers/fake.ts')
        return new FakeDriver(options)
      }
    ),
}

const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/

/**
 * Validates `config/payments.ts` and fills in its defaults. The §3.3
 * verification policy itself is enforced when the provider boots.
 */
export function defineConfig(config: PaymentsConfig): ResolvedPaymentsConfig {
  if (!config || typeof config.providers !== 'object' || config.providers === null) {
    throw new E_PAYMENTS_CONFIG([
      'Missing "providers" in config/payments.ts. Add at least one gateway, for example providers: { stripe: gateways.stripe({ webhookSecret: env.get(\'STRIPE_WEBHOOK_SECRET\') }) }',
    ])
  }
  for (const [name, factory] of Object.entries(config.providers)) {
    if (!PROVIDER_NAME.test(name)) {
      throw new E_PAYMENTS_CONFIG([
        `Invalid provider name "${name}" in config/payments.ts: it is the :provider route segment, use lowercase letters, digits, "-" or "_"`,
      ])
    }
    if (!factory || typeof factory.resolver !== 'function') {
      throw new E_PAYMENTS_CONFIG([
        `Invalid "providers.${name}" in config/payments.ts: use one of gateways.stripe(), gateways.asaas(), ... from adonis-atrium/payments`,
      ])
    }
  }
  const allow = config.allowUnverifiedWebhooks ?? []
  if (allow !== true && !Array.isArray(allow)) {
    throw new E_PAYMENTS_CONFIG([
      'Invalid "allowUnverifiedWebhooks" in config/payments.ts: expected an array of provider names or true',
    ])
  }
  const prefix = (config.routes?.prefix ?? '/payments/webhook').replace(/\/+$/, '')
  if (!prefix.startsWith('/')) {
    throw new E_PAYMENTS_CONFIG([
      `Invalid "routes.prefix" in config/payments.ts: "${prefix}" must start with "/"`,
    ])
  }
  for (const name of config.billing?.passthroughEvents ?? []) {
    if (typeof name !== 'string' || !name.includes('.')) {
      throw new E_PAYMENTS_CONFIG([
        `Invalid billing.passthroughEvents entry ${JSON.stringify(name)} in config/payments.ts: list dotted names such as "payment.anticipated"; undotted passthrough types need no declaration`,
      ])
    }
  }
  return {
    providers: config.providers,
    allowUnverifiedWebhooks: allow,
    billing: {
      handlers: config.billing?.handlers ?? {},
      passthroughEvents: config.billing?.passthroughEvents ?? [],
      handlersPath: config.billing?.handlersPath ?? 'app/payment_handlers',
      connection: config.billing?.connection,
    },
    routes: {
      enabled: config.routes?.enabled ?? true,
      prefix,
      middleware: config.routes?.middleware ?? [],
    },
    maxBodySize: config.maxBodySize ?? 1024 * 1024,
    processingLeaseMs: config.processingLeaseMs ?? 5 * 60_000,
  }
}

/**
 * §3.3: a provider that can verify but has no credential stops the boot,
 * unless it is listed in `allowUnverifiedWebhooks`.
 */
export function assertVerificationPolicy(config: ResolvedPaymentsConfig) {
  const allowed = (name: string) =>
    config.allowUnverifiedWebhooks === true || config.allowUnverifiedWebhooks.includes(name)
  for (const [name, factory] of Object.entries(config.providers)) {
    const descriptor = factory as GatewayDescriptor<unknown>
    if (descriptor.webhookVerification === 'unconfigured' && !allowed(name)) {
      throw new E_PAYMENTS_CONFIG([
        `Missing webhook credential for provider "${name}" (route POST ${config.routes.prefix}/${name}): set "providers.${name}" ${descriptor.credentialHint} in config/payments.ts (env ${descriptor.env}), or add "${name}" to allowUnverifiedWebhooks to accept unverified deliveries`,
      ])
    }
  }
}
