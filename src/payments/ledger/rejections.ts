import { createHash } from 'node:crypto'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { withRetry } from './dialect.ts'
import { TABLES } from './tables.ts'

/** Length of one counting window */
export const REJECTION_WINDOW_MS = 60_000

/**
 * Distinct provider+type+reason keys one process counts per window; the
 * rest share one overflow row, so a flood of invented provider names or
 * reasons still writes a bounded number of rows.
 */
export const MAX_REJECTION_KEYS = 50

const OVERFLOW = { provider: '*', reason: 'other rejections (distinct reasons over the cap)' }

/**
 * Records rejected deliveries as counters, not rows: one row per provider,
 * type and reason per minute, holding the count and the last sample's trace
 * id. No payload is ever stored.
 */
export class RejectionRecorder {
  #client: () => QueryClientContract
  #window = 0
  #keys = new Set<string>()

  constructor(client: () => QueryClientContract) {
    this.#client = client
  }

  async record(row: { provider: string; type: string; reason: string; traceId?: string }) {
    const now = Date.now()
    const windowStart = now - (now % REJECTION_WINDOW_MS)
    if (windowStart !== this.#window) {
      this.#window = windowStart
      this.#keys.clear()
    }
    let provider = row.provider.slice(0, 100)
    let reason = row.reason.slice(0, 1000)
    let key = bucketKey(provider, row.type, reason)
    if (!this.#keys.has(key) && this.#keys.size >= MAX_REJECTION_KEYS) {
      ;({ provider, reason } = OVERFLOW)
      key = bucketKey(provider, row.type, reason)
    }
    this.#keys.add(key)
    const at = new Date(now)
    await withRetry('rejection counter', () =>
      this.#client()
        .table(TABLES.audit)
        .insert({
          provider,
          type: row.type.slice(0, 64),
          reason,
          trace_id: row.traceId ?? null,
          bucket_key: key,
          window_start: windowStart,
          occurrences: 1,
          created_at: at,
          updated_at: at,
        })
        .onConflict(['bucket_key', 'window_start'])
        .merge({
          occurrences: this.#client().raw(`${TABLES.audit}.occurrences + 1`),
          trace_id: row.traceId ?? null,
          updated_at: at,
        })
    )
  }
}

function bucketKey(provider: string, type: string, reason: string) {
  return createHash('sha256').update(`${provider}\0${type}\0${reason}`).digest('hex')
}
