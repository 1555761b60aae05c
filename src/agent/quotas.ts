import type { Database } from '@adonisjs/lucid/database'
import type { Redis } from 'ioredis'
import { assertPackagesInstalled, importOptional } from '../shared/optional_import.ts'
import { CONFIG_FILE } from './config_checks.ts'
import debug from './debug.ts'
import { AgentConfigException } from './errors.ts'
import type { QuotaStoreFactory } from './quota/contract.ts'
import { adonisRedis } from './sinks.ts'

/** `quotas.redis()` options: a named `@adonisjs/redis` connection, or a URL */
export interface RedisQuotaConfig {
  /** Daily token budget per actor */
  limitTokens: number
  /** A connection of config/redis.ts (`@adonisjs/redis`), such as 'main' */
  connection?: string
  /** A Redis URL, for apps without `@adonisjs/redis` (needs the `ioredis` package) */
  url?: string
  /** Key prefix (default `atrium:agent:`) */
  prefix?: string
}

function limitOf(helper: string, value: unknown) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new AgentConfigException(
      `Invalid "limitTokens" of ${helper}() in ${CONFIG_FILE}: expected a positive integer (the daily token budget per actor), received ${JSON.stringify(value)}`
    )
  }
  return value
}

/**
 * Ready quota stores for the `quota` option. Any object implementing
 * `QuotaStore` works as well.
 */
export const quotas = {
  /**
   * The `agent_quota` table on a Lucid connection (what `quotaLimitTokens`
   * uses). `preparedStatements: false` as for stores.lucid().
   */
  lucid(options: {
    limitTokens: number
    connection?: string
    preparedStatements?: boolean
  }): QuotaStoreFactory {
    const limitTokens = limitOf('quotas.lucid', options?.limitTokens)
    return async (app) => {
      if (!app.container.hasBinding('lucid.db')) {
        throw new AgentConfigException(
          `quotas.lucid() in ${CONFIG_FILE} needs @adonisjs/lucid: run "node ace add @adonisjs/lucid", or use quotas.redis()`
        )
      }
      const db: Database = await app.container.make('lucid.db' as any)
      const { LucidQuotaStore } = await import('./quota/lucid.ts')
      return new LucidQuotaStore(() => db.connection(options.connection), limitTokens, {
        preparedStatements: options.preparedStatements,
      })
    }
  },

  /**
   * Redis: one hash per actor and day, each reservation one Lua script.
   * Takes a connection of `@adonisjs/redis` when the app has it, a URL otherwise.
   */
  redis(options: RedisQuotaConfig): QuotaStoreFactory {
    const { connection, url } = options ?? {}
    const limitTokens = limitOf('quotas.redis', options?.limitTokens)
    if ((connection === undefined) === (url === undefined)) {
      throw new AgentConfigException(
        `quotas.redis() in ${CONFIG_FILE} needs one of { connection: 'main' } (a connection of config/redis.ts) or { url: 'redis://…' }`
      )
    }
    for (const [name, value] of Object.entries({ connection, url, prefix: options.prefix })) {
      if (value !== undefined && (typeof value !== 'string' || !value)) {
        throw new AgentConfigException(
          `Invalid "${name}" of quotas.redis() in ${CONFIG_FILE}: expected a non-empty string`
        )
      }
    }
    return async (app) => {
      let redis: Redis
      if (connection) {
        redis = await adonisRedis(app, connection, 'quotas.redis')
      } else {
        assertPackagesInstalled(['ioredis'], `quotas.redis({ url }) in ${CONFIG_FILE}`)
        const { Redis: Client } = await importOptional<typeof import('ioredis')>(
          'ioredis',
          `quotas.redis({ url }) in ${CONFIG_FILE}`
        )
        redis = new Client(url!, { maxRetriesPerRequest: 2 })
        // The fallback connection is ours: its errors fail the calls that meet them, never the process
        redis.on('error', (error) => debug('redis quota connection: %s', error?.message))
      }
      const { RedisQuotaStore } = await import('./quota/redis.ts')
      return new RedisQuotaStore(
        redis,
        { prefix: options.prefix ?? 'atrium:agent:', limitTokens },
        !connection
      )
    }
  },
}
