import { configProvider } from '@adonisjs/core'
import type { ConfigProvider } from '@adonisjs/core/types'
import { PaymentsConfigException } from './errors.ts'
import type { AbacatePayGatewayOptions } from './drivers/abacatepay.ts'
import type { AdyenGatewayOptions } from './drivers/adyen.ts'
import type { AsaasGatewayOptions } from './drivers/asaas.ts'
import type { EfiGatewayOptions } from './drivers/efi.ts'
import type { FakeGatewayOptions } from './drivers/fake.ts'
import type { InfinitePayGatewayOptions } from './drivers/infinitepay.ts'
import type { LemonSqueezyGatewayOptions } from './drivers/lemonsqueezy.ts'
import type { MercadoPagoGatewayOptions } from './drivers/mercadopago.ts'
import type { PagarmeGatewayOptions } from './drivers/pagarme.ts'
import type { PagBankGatewayOptions } from './drivers/pagbank.ts'
import type { RazorpayGatewayOptions } from './drivers/razorpay.ts'
import type { SquareGatewayOptions } from './drivers/square.ts'
import type { StripeGatewayOptions } from './drivers/stripe.ts'
import type { WooviGatewayOptions } from './drivers/woovi.ts'
import type { PaddleGatewayOptions } from './drivers/paddle.ts'
import type { PolarGatewayOptions } from './drivers/polar.ts'
import type { DodoPaymentsGatewayOptions } from './drivers/dodopayments.ts'
import type { PayPalGatewayOptions } from './drivers/paypal.ts'
import type { MollieGatewayOptions } from './drivers/mollie.ts'
import { importOptional } from '../shared/optional_import.ts'
import { GATEWAY_DECLARATIONS, verificationOf, type GatewayName } from './drivers/declarations.ts'
import type {
  GatewayFactory,
  PaymentDriver,
  PaymentsConfig,
  PaymentsRuntime,
  ResolvedPaymentsConfig,
  WebhookVerification,
} from './types.ts'

/**
 * What `gateways.<name>()` returns: the driver's factory plus what the boot
 * needs to know without loading it (verification state, credential hint,
 * optional packages).
 */
export interface GatewayDescriptor<Options> extends GatewayFactory<Options> {
  /** The verification state, known without loading the driver */
  webhookVerification: WebhookVerification
  /** The environment variable(s) a host sets for the credential */
  env: string
}

/**
 * A gateway's descriptor, derived from its declaration (the same one its
 * driver reads); `load` imports the driver module only when the app boots.
 */
function gateway<Options extends object>(
  driver: GatewayName,
  options: Options,
  load: () => Promise<PaymentDriver>
): GatewayDescriptor<Options> {
  const declaration = GATEWAY_DECLARATIONS[driver]
  return {
    driver,
    options,
    webhookVerification: verificationOf(declaration, options),
    credentialHint: declaration.credential,
    env: declaration.env,
    packages: declaration.packages,
    resolver: async () => {
      for (const name of declaration.packages) {
        await importOptional(name, `The "${driver}" gateway in config/payments.ts`)
      }
      return load()
    },
  }
}

/**
 * Driver factories for `config/payments.ts`. A driver's module (and the
 * `stripe` SDK) is imported only when the app boots with that provider.
 */
export const gateways = {
  stripe: (options: StripeGatewayOptions = {}) =>
    gateway('stripe', options, async () => {
      const { StripeDriver } = await import('./drivers/stripe.ts')
      return new StripeDriver(options)
    }),
  abacatepay: (options: AbacatePayGatewayOptions = {}) =>
    gateway('abacatepay', options, async () => {
      const { AbacatePayDriver } = await import('./drivers/abacatepay.ts')
      return new AbacatePayDriver(options)
    }),
  asaas: (options: AsaasGatewayOptions = {}) =>
    gateway('asaas', options, async () => {
      const { AsaasDriver } = await import('./drivers/asaas.ts')
      return new AsaasDriver(options)
    }),
  woovi: (options: WooviGatewayOptions = {}) =>
    gateway('woovi', options, async () => {
      const { WooviDriver } = await import('./drivers/woovi.ts')
      return new WooviDriver(options)
    }),
  pagbank: (options: PagBankGatewayOptions = {}) =>
    gateway('pagbank', options, async () => {
      const { PagBankDriver } = await import('./drivers/pagbank.ts')
      return new PagBankDriver(options)
    }),
  adyen: (options: AdyenGatewayOptions = {}) =>
    gateway('adyen', options, async () => {
      const { AdyenDriver } = await import('./drivers/adyen.ts')
      return new AdyenDriver(options)
    }),
  efi: (options: EfiGatewayOptions = {}) =>
    gateway('efi', options, async () => {
      const { EfiDriver } = await import('./drivers/efi.ts')
      return new EfiDriver(options)
    }),
  infinitepay: (options: InfinitePayGatewayOptions = {}) =>
    gateway('infinitepay', options, async () => {
      const { InfinitePayDriver } = await import('./drivers/infinitepay.ts')
      return new InfinitePayDriver(options)
    }),
  paddle: (options: PaddleGatewayOptions = {}) =>
    gateway('paddle', options, async () => {
      const { PaddleDriver } = await import('./drivers/paddle.ts')
      return new PaddleDriver(options)
    }),
  polar: (options: PolarGatewayOptions = {}) =>
    gateway('polar', options, async () => {
      const { PolarDriver } = await import('./drivers/polar.ts')
      return new PolarDriver(options)
    }),
  dodopayments: (options: DodoPaymentsGatewayOptions = {}) =>
    gateway('dodopayments', options, async () => {
      const { DodoPaymentsDriver } = await import('./drivers/dodopayments.ts')
      return new DodoPaymentsDriver(options)
    }),
  paypal: (options: PayPalGatewayOptions = {}) =>
    gateway('paypal', options, async () => {
      const { PayPalDriver } = await import('./drivers/paypal.ts')
      return new PayPalDriver(options)
    }),
  mollie: (options: MollieGatewayOptions = {}) =>
    gateway('mollie', options, async () => {
      const { MollieDriver } = await import('./drivers/mollie.ts')
      return new MollieDriver(options)
    }),
  fake: (options: FakeGatewayOptions = {}) =>
    gateway('fake', options, async () => {
      const { FakeDriver } = await import('./drivers/fake.ts')
      return new FakeDriver(options)
    }),
  lemonsqueezy: (options: LemonSqueezyGatewayOptions = {}) =>
    gateway('lemonsqueezy', options, async () => {
      const { LemonSqueezyDriver } = await import('./drivers/lemonsqueezy.ts')
      return new LemonSqueezyDriver(options)
    }),
  mercadopago: (options: MercadoPagoGatewayOptions = {}) =>
    gateway('mercadopago', options, async () => {
      const { MercadoPagoDriver } = await import('./drivers/mercadopago.ts')
      return new MercadoPagoDriver(options)
    }),
  pagarme: (options: PagarmeGatewayOptions = {}) =>
    gateway('pagarme', options, async () => {
      const { PagarmeDriver } = await import('./drivers/pagarme.ts')
      return new PagarmeDriver(options)
    }),
  razorpay: (options: RazorpayGatewayOptions = {}) =>
    gateway('razorpay', options, async () => {
      const { RazorpayDriver } = await import('./drivers/razorpay.ts')
      return new RazorpayDriver(options)
    }),
  square: (options: SquareGatewayOptions = {}) =>
    gateway('square', options, async () => {
      const { SquareDriver } = await import('./drivers/square.ts')
      return new SquareDriver(options)
    }),
}

const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/

/**
 * Validates the options of `config/payments.ts` and fills in their defaults,
 * without the container. The verification policy is enforced by the
 * provider, where the routes are served.
 */
export function validatePaymentsConfig(config: PaymentsConfig): ResolvedPaymentsConfig {
  if (!config || typeof config.providers !== 'object' || config.providers === null) {
    throw new PaymentsConfigException(
      'Missing "providers" in config/payments.ts. Add at least one gateway, for example providers: { stripe: gateways.stripe({ webhookSecret: env.get(\'STRIPE_WEBHOOK_SECRET\') }) }'
    )
  }
  for (const [name, factory] of Object.entries(config.providers)) {
    if (!PROVIDER_NAME.test(name)) {
      throw new PaymentsConfigException(
        `Invalid provider name "${name}" in config/payments.ts: it is the :provider route segment, use lowercase letters, digits, "-" or "_"`
      )
    }
    if (!factory || typeof factory.resolver !== 'function') {
      throw new PaymentsConfigException(
        `Invalid "providers.${name}" in config/payments.ts: use one of gateways.stripe(), gateways.asaas(), ... from adonis-atrium/payments`
      )
    }
  }
  const allow = config.allowUnverifiedWebhooks ?? []
  if (allow !== true && !Array.isArray(allow)) {
    throw new PaymentsConfigException(
      'Invalid "allowUnverifiedWebhooks" in config/payments.ts: expected an array of provider names or true'
    )
  }
  const prefix = (config.routes?.prefix ?? '/payments/webhook').replace(/\/+$/, '')
  if (!prefix.startsWith('/')) {
    throw new PaymentsConfigException(
      `Invalid "routes.prefix" in config/payments.ts: "${prefix}" must start with "/"`
    )
  }
  for (const name of config.billing?.passthroughEvents ?? []) {
    if (typeof name !== 'string' || !name.includes('.')) {
      throw new PaymentsConfigException(
        `Invalid billing.passthroughEvents entry ${JSON.stringify(name)} in config/payments.ts: list dotted names such as "payment.anticipated"; undotted passthrough types need no declaration`
      )
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
 * The payments config for `config/payments.ts`: validates the options now
 * (errors name the key and the fix) and returns the config provider the
 * payments provider resolves once, with Lucid's database, the emitter and
 * the logger taken from the container.
 */
export function defineConfig(config: PaymentsConfig): ConfigProvider<PaymentsRuntime> {
  const resolved = validatePaymentsConfig(config)
  return configProvider.create(async (app) => {
    if (!app.container.hasBinding('lucid.db')) {
      throw new PaymentsConfigException(
        'Atrium payments keeps its ledger with Lucid, which is not registered. Run: node ace add @adonisjs/lucid'
      )
    }
    return {
      config: resolved,
      db: await app.container.make('lucid.db'),
      emitter: await app.container.make('emitter'),
      logger: await app.container.make('logger'),
    }
  })
}

/**
 * Why each configured provider cannot be served as configured: a gateway
 * that cannot verify its deliveries (no credential, or none it could have)
 * and is not listed in `allowUnverifiedWebhooks`. One message per provider,
 * naming the route, the key, the env variable and the fix.
 */
export function verificationProblems(config: ResolvedPaymentsConfig): string[] {
  const allowed = (name: string) =>
    config.allowUnverifiedWebhooks === true || config.allowUnverifiedWebhooks.includes(name)
  const problems: string[] = []
  for (const [name, factory] of Object.entries(config.providers)) {
    const descriptor = factory as GatewayDescriptor<unknown>
    if (allowed(name) || descriptor.webhookVerification === 'configured') {
      continue
    }
    const route = `route POST ${config.routes.prefix}/${name}`
    problems.push(
      descriptor.webhookVerification === 'unsupported'
        ? `Provider "${name}" cannot verify its deliveries (${route}): set "providers.${name}" ${descriptor.credentialHint} in config/payments.ts (env ${descriptor.env}), or add "${name}" to allowUnverifiedWebhooks if mutual TLS in front of the app authenticates the gateway`
        : `Missing webhook credential for provider "${name}" (${route}): set "providers.${name}" ${descriptor.credentialHint} in config/payments.ts (env ${descriptor.env}), or add "${name}" to allowUnverifiedWebhooks to accept unverified deliveries`
    )
  }
  return problems
}

/**
 * A gateway that cannot verify is served only when listed in
 * `allowUnverifiedWebhooks`; the first problem stops the boot.
 */
export function assertVerificationPolicy(config: ResolvedPaymentsConfig) {
  const [problem] = verificationProblems(config)
  if (problem) {
    throw new PaymentsConfigException(problem)
  }
}
