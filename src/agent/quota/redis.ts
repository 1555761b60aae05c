import type { Redis } from 'ioredis'
import type { QuotaHold, QuotaStore } from './contract.ts'

/**
 * Holds `ARGV[1]` tokens when used + held + them stays within the limit
 * `ARGV[2]`: the check and the hold are one script, so concurrent calls on
 * any instance never hold more than the limit together.
 */
const RESERVE_SCRIPT = `
local counts = redis.call('HMGET', KEYS[1], 'used', 'reserved')
local used = tonumber(counts[1] or '0')
local reserved = tonumber(counts[2] or '0')
local tokens = tonumber(ARGV[1])
if used + reserved + tokens > tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'reserved', tokens)
redis.call('EXPIREAT', KEYS[1], ARGV[3])
return 1
`

/** Ends a hold of `ARGV[1]` tokens (never below zero) and charges `ARGV[2]` */
const SETTLE_SCRIPT = `
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0') - tonumber(ARGV[1])
if reserved < 0 then reserved = 0 end
redis.call('HSET', KEYS[1], 'reserved', reserved)
redis.call('HINCRBY', KEYS[1], 'used', ARGV[2])
redis.call('EXPIREAT', KEYS[1], ARGV[3])
return 1
`

/** How long a day's counts stay after the day ended, so late settles still find them */
const KEEP_AFTER_DAY_MS = 2 * 86_400_000
/** The latest a day of any time zone ends after the same UTC day (UTC+14) */
const LATEST_ZONE_MS = 14 * 3_600_000

/** When the key of a quota day expires, in Unix seconds */
export function quotaKeyExpiry(day: string) {
  const [year, month, date] = day.split('-').map(Number)
  const utcEnd = Date.UTC(year, month - 1, date + 1)
  return Math.ceil((utcEnd + LATEST_ZONE_MS + KEEP_AFTER_DAY_MS) / 1000)
}

/**
 * The daily budget in Redis: one hash per actor and day
 * (`<prefix>quota:<day>:<actorRef>`, fields `used` and `reserved`), each
 * change one Lua script. Keys expire two days after their day ends.
 */
export class RedisQuotaStore implements QuotaStore {
  #redis: Redis
  #prefix: string
  #limitTokens: number
  #ownsConnection: boolean

  constructor(
    redis: Redis,
    options: { prefix: string; limitTokens: number },
    ownsConnection: boolean
  ) {
    this.#redis = redis
    this.#prefix = options.prefix
    this.#limitTokens = options.limitTokens
    this.#ownsConnection = ownsConnection
  }

  #key(actorRef: string, day: string) {
    return `${this.#prefix}quota:${day}:${actorRef}`
  }

  async reserve(actorRef: string, day: string, tokens: number): Promise<QuotaHold | null> {
    const held = await this.#redis.eval(
      RESERVE_SCRIPT,
      1,
      this.#key(actorRef, day),
      tokens,
      this.#limitTokens,
      quotaKeyExpiry(day)
    )
    return Number(held) === 1 ? { actorRef, day, tokens } : null
  }

  async settle(hold: QuotaHold, usedTokens: number) {
    await this.#redis.eval(
      SETTLE_SCRIPT,
      1,
      this.#key(hold.actorRef, hold.day),
      hold.tokens,
      usedTokens,
      quotaKeyExpiry(hold.day)
    )
  }

  release(hold: QuotaHold) {
    return this.settle(hold, 0)
  }

  async used(actorRef: string, day: string) {
    const used = await this.#redis.hget(this.#key(actorRef, day), 'used')
    return used === null ? 0 : Number(used)
  }

  /** Closes the connection this store opened from a URL */
  async close() {
    if (this.#ownsConnection) this.#redis.disconnect()
  }
}
