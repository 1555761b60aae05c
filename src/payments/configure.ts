import type { FeatureInstaller } from '../shared/features.ts'
import { publishMigrationOnce } from '../shared/features.ts'
import { stubsRoot } from '../../stubs/main.ts'
import { TABLES } from './store.ts'

/**
 * Payments publishes its config, the six billing migrations (once each),
 * its provider and the gateway env variables (all optional: a missing
 * credential is reported at boot, naming the provider).
 */
export const paymentsInstaller: FeatureInstaller = {
  name: 'payments',
  description: 'Payment webhooks: verified, idempotent route for Stripe, Asaas, Adyen and more',
  // configure installs or lists it with the other features' packages
  packages: [{ name: 'stripe', isDevDependency: false }],
  async install(command, codemods) {
    await codemods.makeUsingStub(stubsRoot, 'config/payments.stub', {})
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
    await codemods.defineEnvVariables({
      STRIPE_WEBHOOK_SECRET: '',
      STRIPE_SECRET_KEY: '',
    })
    await codemods.defineEnvValidations({
      leadingComment: 'Variables for Atrium payments (each gateway reads its own)',
      variables: {
        STRIPE_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        STRIPE_SECRET_KEY: 'Env.schema.string.optional()',
        ASAAS_WEBHOOK_TOKEN: 'Env.schema.string.optional()',
        ABACATEPAY_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        ABACATEPAY_PUBLIC_KEY: 'Env.schema.string.optional()',
        WOOVI_WEBHOOK_PUBLIC_KEY: 'Env.schema.string.optional()',
        PAGBANK_WEBHOOK_TOKEN: 'Env.schema.string.optional()',
        ADYEN_HMAC_KEY: 'Env.schema.string.optional()',
        EFI_WEBHOOK_HMAC: 'Env.schema.string.optional()',
        INFINITEPAY_HANDLE: 'Env.schema.string.optional()',
        PADDLE_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        POLAR_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        DODO_PAYMENTS_WEBHOOK_KEY: 'Env.schema.string.optional()',
        PAYPAL_WEBHOOK_ID: 'Env.schema.string.optional()',
        MOLLIE_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        MOLLIE_API_KEY: 'Env.schema.string.optional()',
        LEMONSQUEEZY_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        MERCADOPAGO_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        MERCADOPAGO_ACCESS_TOKEN: 'Env.schema.string.optional()',
        PAGARME_SECRET_KEY: 'Env.schema.string.optional()',
        RAZORPAY_WEBHOOK_SECRET: 'Env.schema.string.optional()',
        SQUARE_WEBHOOK_SIGNATURE_KEY: 'Env.schema.string.optional()',
        SQUARE_WEBHOOK_URL: 'Env.schema.string.optional()',
      },
    })
  },
}
