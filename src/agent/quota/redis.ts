import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import {
  DEFAULT_HOLD_LEASE_MS,
  type QuotaClock,
  type QuotaHold,
  type QuotaStore,
} from './contract.ts'

/**
 * Gives back every hold of the day whose lease ended by `ARGV[4]` (fields
 * `hold:<id>` = `<tokens>:<lease end ms>`), then holds `ARGV[1]` tokens as
 * `hold:<ARGV[5]>` until `ARGV[6]` when used + held + them stays within the
 * limit `ARGV[2]`: one script, so concurrent calls on any instance never
 * hold more than the limit together.
 */
const RESERVE_SCRIPT = `
local fields = redis.call('HGETALL', KEYS[1])
local now = tonumber(ARGV[4])
local used = 0
local reserved = 0
local reclaimed = 0
for i = 1, #fields, 2 do
  local name = fields[i]
  if name == 'used' then used = tonumber(fields[i + 1])
  elseif name == 'reserved' then reserved = tonumber(fields[i + 1])
  elseif string.sub(name, 1, 5) == 'hold:' then
    local value = fields[i + 1]
    local colon = string.find(value, ':', 1, true)
    if tonumber(string.sub(value, colon + 1)) <= now then
      redis.call('HDEL', KEYS[1], name)
      reclaimed = reclaimed + tonumber(string.sub(value, 1, colon - 1))
    end
  end
end
reserved = reserved - reclaimed
if reserved < 0 then reserved = 0 end
local tokens = tonumber(ARGV[1])
local held = 0
if used + reserved + tokens <= tonumber(ARGV[2]) then
  reserved = reserved + tokens
  redis.call('HSET', KEYS[1], 'hold:' .. ARGV[5], ARGV[1] .. ':' .. ARGV[6])
  held = 1
end
if held == 1 or reclaimed > 0 then
  redis.call('HSET', KEYS[1], 'reserved', reserved)
  redis.call('EXPIREAT', KEYS[1], ARGV[3])
end
return held
`

/**
 * Ends the hold `hold:<ARGV[4]>` of `ARGV[1]` tokens (never below zero) and
 * charges `ARGV[2]`; nothing when its field is gone (given back already).
 * A hold without an id (`ARGV[4]` empty) is ended as it is.
 */
const SETTLE_SCRIPT = `
if ARGV[4] ~= '' and redis.call('HDEL', KEYS[1], 'hold:' .. ARGV[4]) == 0 then return 0 end
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0') - tonumber(ARGV[1])
if reserved < 0 then reserved = 0 end
redis.call('HSET', KEYS[1], 'reserved', reserved)
redis.call('HINCRBY', KEYS[1], 'used', ARGV[2])
redis.call('EXPIREAT', KEYS[1], ARGV[3])
return 1
`

/** Moves the lease end of `hold:<ARGV[1]>` to `ARGV[2]`, when the hold is still there */
const RENEW_SCRIPT = `
local value = redis.call('HGET', KEYS[1], 'hold:' .. ARGV[1])
if not value then return 0 end
local colon = string.find(value, ':', 1, true)
redis.call('HSET', KEYS[1], 'hold:' .. ARGV[1], string.sub(value, 1, colon) .. ARGV[2])
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
 * (`<prefix>quota:<day>:<actorRef>`, fields `used`, `reserved` and one
 * `hold:<id>` per call in flight, with its lease end), each change one Lua
 * script. Keys expire two days after their day ends.
 */
export class RedisQuotaStore implements QuotaStore {
  #redis: Redis
  #prefix: string
  #limitTokens: number
  #ownsConnection: boolean
  #now: () => number

  constructor(
    redis: Redis,
    options: { prefix: string; limitTokens: number } & QuotaClock,
    ownsConnection: boolean
  ) {
    this.#redis = redis
    this.#prefix = options.prefix
    this.#limitTokens = options.limitTokens
    this.#ownsConnection = ownsConnection
    this.#now = options.now ?? Date.now
  }

  #key(actorRef: string, day: string) {
    return `${this.#prefix}quota:${day}:${actorRef}`
  }

  async reserve(
    actorRef: string,
    day: string,
    tokens: number,
    leaseMs = DEFAULT_HOLD_LEASE_MS
  ): Promise<QuotaHold | null> {
    const id = randomUUID()
    const now = this.#now()
    const held = await this.#redis.eval(
      RESERVE_SCRIPT,
      1,
      this.#key(actorRef, day),
      tokens,
      this.#limitTokens,
      quotaKeyExpiry(day),
      now,
      id,
      now + leaseMs
    )
    return Number(held) === 1 ? { actorRef, day, tokens, id } : null
  }

  async settle(hold: QuotaHold, usedTokens: number) {
    await this.#redis.eval(
      SETTLE_SCRIPT,
      1,
      this.#key(hold.actorRef, hold.day),
      hold.tokens,
      usedTokens,
      quotaKeyExpiry(hold.day),
      hold.id ?? ''
    )
  }

  release(hold: QuotaHold) {
    return this.settle(hold, 0)
  }

  async renew(hold: QuotaHold, leaseMs: number) {
    if (!hold.id) return
    const key = this.#key(hold.actorRef, hold.day)
    await this.#redis.eval(RENEW_SCRIPT, 1, key, hold.id, this.#now() + leaseMs)
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
