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

export default await Env.create(new URL('../', import.meta.url), {
  NODE_ENV: Env.schema.enum(['development', 'production', 'test'] as const),
  PORT: Env.schema.number(),
  HOST: Env.schema.string({ format: 'host' }),
  LOG_LEVEL: Env.schema.string(),
  APP_KEY: Env.schema.secret(),
  PAGINATION_CURSOR_SECRET: Env.schema.string.optional(),
  COLLAB_TOKEN_SECRET: Env.schema.string.optional(),
})
