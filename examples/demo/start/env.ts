import { Env } from '@adonisjs/core/env'

/**
 * The demo runs from a fresh clone without a .env file, so every variable
 * has a development default here.
 */
process.env.NODE_ENV ??= 'development'
process.env.PORT ??= '3333'
process.env.HOST ??= 'localhost'
process.env.LOG_LEVEL ??= 'info'
process.env.APP_KEY ??= 'atrium-demo-key-for-local-use-only'
process.env.STRIPE_WEBHOOK_SECRET ??= 'whsec_demo_secret'
process.env.ABACATEPAY_WEBHOOK_SECRET ??= 'demo-abacatepay-url-secret'
process.env.ABACATEPAY_PUBLIC_KEY ??= 'demo-abacatepay-public-key'
process.env.ASAAS_WEBHOOK_TOKEN ??= 'demo-asaas-token'
process.env.PAGBANK_WEBHOOK_TOKEN ??= 'demo-pagbank-token'
process.env.ADYEN_HMAC_KEY ??= '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'

export default await Env.create(new URL('../', import.meta.url), {
  NODE_ENV: Env.schema.enum(['development', 'production', 'test'] as const),
  PORT: Env.schema.number(),
  HOST: Env.schema.string({ format: 'host' }),
  LOG_LEVEL: Env.schema.string(),
  APP_KEY: Env.schema.secret(),
  PAGINATION_CURSOR_SECRET: Env.schema.string.optional(),
  STRIPE_WEBHOOK_SECRET: Env.schema.string.optional(),
  STRIPE_SECRET_KEY: Env.schema.string.optional(),
  ABACATEPAY_WEBHOOK_SECRET: Env.schema.string.optional(),
  ABACATEPAY_PUBLIC_KEY: Env.schema.string.optional(),
  ASAAS_WEBHOOK_TOKEN: Env.schema.string.optional(),
  PAGBANK_WEBHOOK_TOKEN: Env.schema.string.optional(),
  ADYEN_HMAC_KEY: Env.schema.string.optional(),
  COLLAB_TOKEN_SECRET: Env.schema.string.optional(),
  /** The /agent page's model: unset for the local scripted one, or openai:<model>, anthropic:<model> */
  AGENT_MODEL: Env.schema.string.optional(),
  OPENAI_API_KEY: Env.schema.string.optional(),
  ANTHROPIC_API_KEY: Env.schema.string.optional(),
  /** The SQLite file; tmp/demo.sqlite3 by default (tests point it elsewhere) */
  DEMO_SQLITE_FILE: Env.schema.string.optional(),
})
