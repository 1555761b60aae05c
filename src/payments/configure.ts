import type Configure from '@adonisjs/core/commands/configure'
import string from '@adonisjs/core/helpers/string'
import type { FeatureInstaller, PackageToInstall } from '../shared/features.ts'
import { canPrompt, publishMigrationOnce } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { GATEWAY_DECLARATIONS, type GatewayName } from './drivers/declarations.ts'
import { TABLES } from './store.ts'

/**
 * Each gateway as config/payments.ts declares it, in the order the config
 * lists them, with the name the prompt shows. Chosen ones are written
 * enabled, the others commented out, ready to enable.
 */
const GATEWAY_ENTRIES: Record<Exclude<GatewayName, 'fake'>, { label: string; lines: string[] }> = {
  stripe: {
    label: 'Stripe',
    lines: [
      'stripe: gateways.stripe({',
      "  webhookSecret: env.get('STRIPE_WEBHOOK_SECRET'),",
      "  apiKey: env.get('STRIPE_SECRET_KEY'),",
      '}),',
    ],
  },
  paddle: {
    label: 'Paddle Billing',
    lines: ["paddle: gateways.paddle({ webhookSecret: env.get('PADDLE_WEBHOOK_SECRET') }),"],
  },
  paypal: {
    label: 'PayPal',
    lines: ["paypal: gateways.paypal({ webhookId: env.get('PAYPAL_WEBHOOK_ID') }),"],
  },
  mollie: {
    label: 'Mollie',
    lines: [
      'mollie: gateways.mollie({',
      "  webhookSecret: env.get('MOLLIE_WEBHOOK_SECRET'),",
      "  apiKey: env.get('MOLLIE_API_KEY'),",
      '}),',
    ],
  },
  adyen: {
    label: 'Adyen',
    lines: ["adyen: gateways.adyen({ hmacKey: env.get('ADYEN_HMAC_KEY') }),"],
  },
  square: {
    label: 'Square',
    lines: [
      'square: gateways.square({',
      "  signatureKey: env.get('SQUARE_WEBHOOK_SIGNATURE_KEY'),",
      "  notificationUrl: env.get('SQUARE_WEBHOOK_URL'),",
      '}),',
    ],
  },
  razorpay: {
    label: 'Razorpay',
    lines: ["razorpay: gateways.razorpay({ webhookSecret: env.get('RAZORPAY_WEBHOOK_SECRET') }),"],
  },
  lemonsqueezy: {
    label: 'Lemon Squeezy',
    lines: [
      "lemonsqueezy: gateways.lemonsqueezy({ signingSecret: env.get('LEMONSQUEEZY_WEBHOOK_SECRET') }),",
    ],
  },
  polar: {
    label: 'Polar',
    lines: ["polar: gateways.polar({ webhookSecret: env.get('POLAR_WEBHOOK_SECRET') }),"],
  },
  dodopayments: {
    label: 'Dodo Payments',
    lines: [
      "dodopayments: gateways.dodopayments({ webhookSecret: env.get('DODO_PAYMENTS_WEBHOOK_KEY') }),",
    ],
  },
  mercadopago: {
    label: 'Mercado Pago',
    lines: [
      'mercadopago: gateways.mercadopago({',
      "  webhookSecret: env.get('MERCADOPAGO_WEBHOOK_SECRET'),",
      "  accessToken: env.get('MERCADOPAGO_ACCESS_TOKEN'),",
      '}),',
    ],
  },
  pagarme: {
    label: 'Pagar.me',
    lines: ["pagarme: gateways.pagarme({ secretKey: env.get('PAGARME_SECRET_KEY') }),"],
  },
  pagbank: {
    label: 'PagBank',
    lines: ["pagbank: gateways.pagbank({ webhookToken: env.get('PAGBANK_WEBHOOK_TOKEN') }),"],
  },
  asaas: {
    label: 'Asaas',
    lines: ["asaas: gateways.asaas({ webhookToken: env.get('ASAAS_WEBHOOK_TOKEN') }),"],
  },
  abacatepay: {
    label: 'AbacatePay',
    lines: [
      'abacatepay: gateways.abacatepay({',
      "  webhookSecret: env.get('ABACATEPAY_WEBHOOK_SECRET'),",
      "  publicKey: env.get('ABACATEPAY_PUBLIC_KEY'),",
      '}),',
    ],
  },
  woovi: {
    label: 'Woovi (OpenPix)',
    lines: ["woovi: gateways.woovi({ webhookPublicKey: env.get('WOOVI_WEBHOOK_PUBLIC_KEY') }),"],
  },
  efi: {
    label: 'Efí',
    lines: ["efi: gateways.efi({ webhookHmac: env.get('EFI_WEBHOOK_HMAC') }),"],
  },
  infinitepay: {
    label: 'InfinitePay',
    lines: ["infinitepay: gateways.infinitepay({ handle: env.get('INFINITEPAY_HANDLE') }),"],
  },
}

type ConfigurableGateway = keyof typeof GATEWAY_ENTRIES
const CONFIGURABLE = Object.keys(GATEWAY_ENTRIES) as ConfigurableGateway[]

/** Chosen without a terminal and without `--gateways` */
const DEFAULT_GATEWAYS: ConfigurableGateway[] = ['stripe']

/** The prompt that chooses gateways when `--gateways` is absent */
export const SELECT_GATEWAYS = 'Select the payment gateways to configure'

/** The env variables a gateway's config entry reads */
function envVariablesOf(gateway: ConfigurableGateway) {
  return GATEWAY_ENTRIES[gateway].lines.flatMap((line) =>
    [...line.matchAll(/env\.get\('(\w+)'\)/g)].map((match) => match[1])
  )
}

/** The `providers` block of config/payments.ts: chosen gateways enabled, the rest commented */
export function providersBlock(chosen: readonly string[]) {
  const indent = '    '
  return CONFIGURABLE.flatMap((gateway) =>
    GATEWAY_ENTRIES[gateway].lines.map((line) =>
      chosen.includes(gateway) ? `${indent}${line}` : `${indent}// ${line}`
    )
  ).join('\n')
}

/** The optional packages the chosen gateways' drivers load (the Stripe, Paddle, Mollie SDKs...) */
export function packagesForGateways(chosen: readonly string[]): PackageToInstall[] {
  const names = new Set(
    chosen.flatMap((gateway) => GATEWAY_DECLARATIONS[gateway as ConfigurableGateway].packages)
  )
  return [...names].map((name) => ({ name, isDevDependency: false }))
}

/** Reads `--gateways=a,b` (or `all`); empty when absent */
function gatewaysFromFlag(command: Configure): string[] {
  const flag = command.parsedFlags.gateways
  if (flag === undefined || flag === true || flag === '') return []
  const names = (Array.isArray(flag) ? flag : [flag])
    .flatMap((value) => String(value).split(','))
    .map((value) => value.trim().toLowerCase())
    .filter(Boolean)
  return names.includes('all') ? [...CONFIGURABLE] : names
}

/**
 * The gateways to configure: `--gateways`, else a prompt (Stripe checked),
 * else, without a terminal, Stripe. Null (exit code 1) for an unknown name.
 */
async function chooseGateways(command: Configure): Promise<string[] | null> {
  let chosen = gatewaysFromFlag(command)
  if (chosen.length === 0) {
    if (canPrompt(command, SELECT_GATEWAYS)) {
      chosen = await command.prompt.multiple(
        SELECT_GATEWAYS,
        CONFIGURABLE.map((name) => ({ name, hint: GATEWAY_ENTRIES[name].label })),
        {
          default: DEFAULT_GATEWAYS,
          validate: (values) => (values.length ? true : 'Select at least one gateway'),
        }
      )
    } else {
      command.logger.info(
        'Payments: Stripe enabled (choose with --gateways=<names> or --gateways=all; ' +
          'every other gateway is in config/payments.ts, commented out)'
      )
      chosen = [...DEFAULT_GATEWAYS]
    }
  }
  const unknown = chosen.filter((name) => !CONFIGURABLE.includes(name as ConfigurableGateway))
  if (unknown.length) {
    command.exitCode = 1
    command.logger.logError(
      `Unknown payment gateway ${string.sentence(unknown.map((name) => `"${name}"`))}. ` +
        `Use --gateways with ${string.sentence([...CONFIGURABLE, 'all'])}`
    )
    return null
  }
  return [...new Set(chosen)]
}

/**
 * Payments publishes its config with the chosen gateways enabled, the six
 * billing migrations (once each), its provider and the gateway env
 * variables (all optional: a missing credential is reported at boot, naming
 * the provider); the chosen gateways' SDKs are installed or listed.
 */
export const paymentsInstaller: FeatureInstaller = {
  name: 'payments',
  description: 'Payment webhooks: verified, idempotent route for Stripe, Paddle, PayPal and more',
  // what configure installs or lists when Stripe alone is chosen
  packages: packagesForGateways(DEFAULT_GATEWAYS),
  async install(command, codemods) {
    const chosen = await chooseGateways(command)
    if (!chosen) return false
    await codemods.makeUsingStub(stubsRoot, 'config/payments.stub', {
      providers: providersBlock(chosen),
    })
    const order = ['events', 'payments', 'refunds', 'disputes', 'subscriptions', 'audit'] as const
    for (const [index, key] of order.entries()) {
      await publishMigrationOnce(command, codemods, stubsRoot, {
        stub: `make/migration/${TABLES[key]}.stub`,
        tableName: TABLES[key],
        order: index,
      })
    }
    await codemods.updateRcFile((rcFile) => {
      rcFile.addProvider('adonis-atrium/providers/payments_provider')
    })
    const chosenVariables = chosen.flatMap((name) => envVariablesOf(name as ConfigurableGateway))
    await codemods.defineEnvVariables(
      Object.fromEntries(chosenVariables.map((variable) => [variable, '']))
    )
    await codemods.defineEnvValidations({
      leadingComment: 'Variables for Atrium payments (each gateway reads its own)',
      variables: Object.fromEntries(
        CONFIGURABLE.flatMap(envVariablesOf).map((variable) => [
          variable,
          'Env.schema.string.optional()',
        ])
      ),
    })
    return packagesForGateways(chosen)
  },
}
