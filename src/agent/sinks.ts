import type { ApplicationService } from '@adonisjs/core/types'
import type { Redis } from 'ioredis'
import { assertPackagesInstalled, importOptional } from '../shared/optional_import.ts'
import { CONFIG_FILE } from './config_checks.ts'
import debug from './debug.ts'
import { AgentConfigException } from './errors.ts'
import type { RedisRunSink } from './sink/redis.ts'

/** What a sink factory learns from the rest of the config */
export interface SinkContext {
  maxFrames: number
  retainFinishedMs: number
}

/**
 * Builds the cross-instance run log at boot; null keeps runs in this
 * process only (the in-memory default).
 */
export type AgentSinkFactory = (
  app: ApplicationService,
  context: SinkContext
) => Promise<RedisRunSink | null>

/** `sinks.redis()` options: a named `@adonisjs/redis` connection, or a URL */
export interface RedisSinkConfig {
  /** A connection of config/redis.ts (`@adonisjs/redis`), such as 'main' */
  connection?: string
  /** A Redis URL, for apps without `@adonisjs/redis` (needs the `ioredis` package) */
  url?: string
  /** Key and channel prefix (default `atrium:agent:`) */
  prefix?: string
  /** Lease of the instance running a turn; readers fail a run whose lease lapsed (10 000 ms) */
  leaseMs?: number
}

/** The ioredis client of a named `@adonisjs/redis` connection; `helper` names the option asking */
export async function adonisRedis(
  app: ApplicationService,
  name: string,
  helper = 'sinks.redis'
): Promise<Redis> {
  if (!app.container.hasBinding('redis' as any)) {
    throw new AgentConfigException(
      `${helper}({ connection: '${name}' }) in ${CONFIG_FILE} needs @adonisjs/redis: run "node ace add @adonisjs/redis", or pass { url } instead`
    )
  }
  const manager: any = await app.container.make('redis' as any)
  const connection = manager.connection(name)
  return connection.ioConnection ?? connection
}

/**
 * Where a run's frames live for resumes (the design's token stream sink).
 */
export const sinks = {
  /** In process memory: one instance serves a run and its resumes (the default) */
  memory(): AgentSinkFactory {
    return async () => null
  },

  /**
   * Redis Streams: any instance serves any run's resume, cancel and approval.
   * Takes a connection of `@adonisjs/redis` when the app has it, a URL otherwise.
   */
  redis(options: RedisSinkConfig): AgentSinkFactory {
    const { connection, url } = options ?? {}
    if ((connection === undefined) === (url === undefined)) {
      throw new AgentConfigException(
        `sinks.redis() in ${CONFIG_FILE} needs one of { connection: 'main' } (a connection of config/redis.ts) or { url: 'redis://…' }`
      )
    }
    for (const [name, value] of Object.entries({ connection, url, prefix: options.prefix })) {
      if (value !== undefined && (typeof value !== 'string' || !value)) {
        throw new AgentConfigException(
          `Invalid "${name}" of sinks.redis() in ${CONFIG_FILE}: expected a non-empty string`
        )
      }
    }
    const leaseMs = options.leaseMs ?? 10_000
    if (!Number.isInteger(leaseMs) || leaseMs < 100) {
      throw new AgentConfigException(
        `Invalid "leaseMs" of sinks.redis() in ${CONFIG_FILE}: expected an integer of at least 100 (milliseconds), received ${JSON.stringify(options.leaseMs)}`
      )
    }
    return async (app, context) => {
      const logger: any = await app.container.make('logger').catch(() => null)
      const report = (error: unknown, operation: string) => {
        debug('redis sink %s failed: %s', operation, (error as Error)?.message)
        logger?.warn?.(`atrium agent: Redis run log ${operation} failed`)
      }
      let redis: Redis
      if (connection) {
        redis = await adonisRedis(app, connection)
      } else {
        assertPackagesInstalled(['ioredis'], `sinks.redis({ url }) in ${CONFIG_FILE}`)
        const { Redis: Client } = await importOptional<typeof import('ioredis')>(
          'ioredis',
          `sinks.redis({ url }) in ${CONFIG_FILE}`
        )
        redis = new Client(url!, { maxRetriesPerRequest: 2 })
        // The fallback connection is ours: its errors are reported, never unhandled
        redis.on('error', (error) => report(error, 'connection'))
      }
      const { RedisRunSink } = await import('./sink/redis.ts')
      return RedisRunSink.connect(
        redis,
        { prefix: options.prefix ?? 'atrium:agent:', leaseMs, ...context },
        !connection,
        report
      )
    }
  },
}
