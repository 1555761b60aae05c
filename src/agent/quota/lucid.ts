import { randomUUID } from 'node:crypto'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { AGENT_TABLES } from '../store/lucid_rows.ts'
import {
  DEFAULT_HOLD_LEASE_MS,
  type QuotaClock,
  type QuotaHold,
  type QuotaStore,
} from './contract.ts'

/**
 * The built-in daily budget in the `agent_quota` table: one row per actor
 * and day, held with one conditional update, so concurrent calls on any
 * instance never hold more than the limit together. Each hold is a row of
 * `agent_quota_holds` with a lease end; whoever deletes that row (the
 * settle, the release, or a later reservation once the lease ran out)
 * moves its tokens, so they move once.
 */
export class LucidQuotaStore implements QuotaStore {
  #client: () => QueryClientContract
  #limitTokens: number
  #now: () => number

  constructor(client: () => QueryClientContract, limitTokens: number, clock: QuotaClock = {}) {
    this.#client = client
    this.#limitTokens = limitTokens
    this.#now = clock.now ?? Date.now
  }

  async reserve(actorRef: string, day: string, tokens: number, leaseMs = DEFAULT_HOLD_LEASE_MS) {
    const client = this.#client()
    try {
      await client.insertQuery().table(AGENT_TABLES.quota).insert({
        actor_ref: actorRef,
        day,
        used_tokens: 0,
        reserved_tokens: 0,
        updated_at: new Date(),
      })
    } catch {
      // The (actor_ref, day) row exists already: the unique index refused a second one
    }
    return client.transaction(async (trx): Promise<QuotaHold | null> => {
      const now = this.#now()
      const row = this.#row(trx, actorRef, day)
      // Locks the day's row first, as settle does: holds of one day change one at a time
      await row.clone().update({ updated_at: new Date(now) })
      const expired = await trx
        .from(AGENT_TABLES.quotaHolds)
        .where('actor_ref', actorRef)
        .where('day', day)
        .where('expires_at', '<=', now)
        .select('id', 'tokens')
      const reclaimed = expired.reduce((sum, hold) => sum + Number(hold.tokens), 0)
      if (expired.length) {
        await trx
          .from(AGENT_TABLES.quotaHolds)
          .whereIn(
            'id',
            expired.map((hold) => hold.id)
          )
          .delete()
      }
      const affected = await row
        .clone()
        .whereRaw('used_tokens + reserved_tokens - ? + ? <= ?', [
          reclaimed,
          tokens,
          this.#limitTokens,
        ])
        .update({ reserved_tokens: trx.raw('reserved_tokens - ? + ?', [reclaimed, tokens]) })
      if (Number(Array.isArray(affected) ? affected[0] : affected) !== 1) {
        if (reclaimed) {
          await row.clone().update({ reserved_tokens: trx.raw('reserved_tokens - ?', [reclaimed]) })
        }
        return null
      }
      const hold = { actorRef, day, tokens, id: randomUUID() }
      await trx
        .insertQuery()
        .table(AGENT_TABLES.quotaHolds)
        .insert({
          id: hold.id,
          actor_ref: actorRef,
          day,
          tokens,
          expires_at: now + leaseMs,
        })
      return hold
    })
  }

  settle(hold: QuotaHold, usedTokens: number) {
    return this.#end(hold, usedTokens)
  }

  release(hold: QuotaHold) {
    return this.#end(hold, 0)
  }

  async renew(hold: QuotaHold, leaseMs: number) {
    if (!hold.id) return
    await this.#client()
      .from(AGENT_TABLES.quotaHolds)
      .where('id', hold.id)
      .update({ expires_at: this.#now() + leaseMs })
  }

  #row(client: QueryClientContract | TransactionClientContract, actorRef: string, day: string) {
    return client.from(AGENT_TABLES.quota).where('actor_ref', actorRef).where('day', day)
  }

  async #end(hold: QuotaHold, usedTokens: number) {
    await this.#client().transaction(async (trx) => {
      const row = this.#row(trx, hold.actorRef, hold.day)
      await row.clone().update({ updated_at: new Date(this.#now()) })
      if (hold.id) {
        const deleted = await trx.from(AGENT_TABLES.quotaHolds).where('id', hold.id).delete()
        // Its lease ran out and a reservation gave its tokens back already
        if (Number(Array.isArray(deleted) ? deleted[0] : deleted) !== 1) return
      }
      await row.clone().update({
        reserved_tokens: trx.raw('reserved_tokens - ?', [hold.tokens]),
        used_tokens: trx.raw('used_tokens + ?', [usedTokens]),
      })
    })
  }

  async used(actorRef: string, day: string) {
    const row = await this.#row(this.#client(), actorRef, day).first()
    return row ? Number(row.used_tokens) : 0
  }
}
