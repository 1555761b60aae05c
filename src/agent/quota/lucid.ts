import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { AGENT_TABLES } from '../store/lucid_rows.ts'
import type { QuotaHold, QuotaStore } from './contract.ts'

/**
 * The built-in daily budget in the `agent_quota` table: one row per actor
 * and day, held with one conditional update, so concurrent calls on any
 * instance never hold more than the limit together.
 */
export class LucidQuotaStore implements QuotaStore {
  #client: () => QueryClientContract
  #limitTokens: number

  constructor(client: () => QueryClientContract, limitTokens: number) {
    this.#client = client
    this.#limitTokens = limitTokens
  }

  async reserve(actorRef: string, day: string, tokens: number): Promise<QuotaHold | null> {
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
    const affected = await client
      .from(AGENT_TABLES.quota)
      .where('actor_ref', actorRef)
      .where('day', day)
      .whereRaw('used_tokens + reserved_tokens + ? <= ?', [tokens, this.#limitTokens])
      .update({
        reserved_tokens: client.raw('reserved_tokens + ?', [tokens]),
        updated_at: new Date(),
      })
    const held = Number(Array.isArray(affected) ? affected[0] : affected) === 1
    return held ? { actorRef, day, tokens } : null
  }

  settle(hold: QuotaHold, usedTokens: number) {
    return this.#move(hold, usedTokens)
  }

  release(hold: QuotaHold) {
    return this.#move(hold, 0)
  }

  async #move(hold: QuotaHold, usedTokens: number) {
    const client = this.#client()
    await client
      .from(AGENT_TABLES.quota)
      .where('actor_ref', hold.actorRef)
      .where('day', hold.day)
      .update({
        reserved_tokens: client.raw('reserved_tokens - ?', [hold.tokens]),
        used_tokens: client.raw('used_tokens + ?', [usedTokens]),
        updated_at: new Date(),
      })
  }

  async used(actorRef: string, day: string) {
    const row = await this.#client()
      .from(AGENT_TABLES.quota)
      .where('actor_ref', actorRef)
      .where('day', day)
      .first()
    return row ? Number(row.used_tokens) : 0
  }
}
