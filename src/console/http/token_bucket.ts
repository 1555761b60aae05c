/** IPs tracked at once; past this the least recently seen is forgotten */
const MAX_KEYS = 10_000

/**
 * A per-key token bucket in process memory: `burst` tokens, refilled at
 * `perMinute`. Enough for one process in front of a public endpoint; a fleet
 * behind a balancer multiplies the rate by its size.
 */
export class TokenBucket {
  #capacity: number
  #refillPerMs: number
  #buckets = new Map<string, { tokens: number; at: number }>()

  constructor(options: { burst: number; perMinute: number }) {
    this.#capacity = options.burst
    this.#refillPerMs = options.perMinute / 60_000
  }

  /** Takes one token for `key`: 0 when allowed, else the seconds until the next token */
  take(key: string, now = Date.now()): number {
    let bucket = this.#buckets.get(key)
    if (bucket) {
      this.#buckets.delete(key)
      bucket.tokens = Math.min(
        this.#capacity,
        bucket.tokens + (now - bucket.at) * this.#refillPerMs
      )
      bucket.at = now
    } else {
      if (this.#buckets.size >= MAX_KEYS) this.#buckets.delete(this.#buckets.keys().next().value!)
      bucket = { tokens: this.#capacity, at: now }
    }
    // re-inserted so the map's order is least recently seen first
    this.#buckets.set(key, bucket)
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#refillPerMs / 1000))
  }
}
