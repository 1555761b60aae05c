import { randomUUID } from 'node:crypto'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { AGENT_TABLES } from '../store/lucid_rows.ts'
import { reserveInOneStep } from './one_statement.ts'
import {
  DEFAULT_HOLD_LEASE_MS,
  type QuotaClock,
  type QuotaHold,
  type QuotaStore,
} from './contract.ts'

/** Returned inside the transaction when the actor-day row is gone */
const MISSING_ROW = Symbol('missing quota row')
/** Actor-days remembered per instance; past it the memory starts over */
const KNOWN_ROWS_CAP = 10_000

type QuotaRowQuery = ReturnType<TransactionClientContract['from']>

function affectedOne(affected: unknown) {
  return Number(Array.isArray(affected) ? affected[0] : affected) === 1
}

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
  /** Actor-days whose row this instance has seen, so a reservation skips the insert */
  #knownRows = new Set<string>()

  /** False: every reservation takes the transaction path (for poolers without prepared statements) */
  #preparedStatements: boolean

  constructor(
    client: () => QueryClientContract,
    limitTokens: number,
    options: QuotaClock & { preparedStatements?: boolean } = {}
  ) {
    this.#client = client
    this.#limitTokens = limitTokens
    this.#now = options.now ?? Date.now
    this.#preparedStatements = options.preparedStatements ?? true
  }

  async reserve(actorRef: string, day: string, tokens: number, leaseMs = DEFAULT_HOLD_LEASE_MS) {
    const key = `${day}\0${actorRef}`
    if (!this.#knownRows.has(key)) await this.#createRow(actorRef, day, key)
    if (this.#preparedStatements) {
      const holdId = randomUUID()
      const inOneStep = await reserveInOneStep(this.#client(), {
        holdId,
        actorRef,
        day,
        tokens,
        limitTokens: this.#limitTokens,
        expiresAt: this.#now() + leaseMs,
      })
      if (inOneStep) return { id: holdId, actorRef, day, tokens }
    }
    const hold = await this.#client().transaction((trx) =>
      this.#reserveIn(trx, actorRef, day, tokens, leaseMs)
    )
    if (hold !== MISSING_ROW) return hold
    // The row went away under the cache (a table emptied by hand): create it and try once more
    this.#knownRows.delete(key)
    await this.#createRow(actorRef, day, key)
    const retried = await this.#client().transaction((trx) =>
      this.#reserveIn(trx, actorRef, day, tokens, leaseMs)
    )
    return retried === MISSING_ROW ? null : retried
  }

  /**
   * The transaction path: what the one-step path (the common case, in
   * one_statement.ts) leaves to it, and every reservation on MariaDB. The
   * common case costs one conditional update and the hold's insert. Only
   * a refused reservation looks for holds of dead instances: their tokens
   * matter only when they stand between a call and the limit.
   */
  async #reserveIn(
    trx: TransactionClientContract,
    actorRef: string,
    day: string,
    tokens: number,
    leaseMs: number
  ): Promise<QuotaHold | null | typeof MISSING_ROW> {
    const now = this.#now()
    const row = this.#row(trx, actorRef, day)
    if (await this.#take(row, tokens, 0))
      return this.#insertHold(trx, actorRef, day, tokens, now + leaseMs)
    // Locks the day's row first, as settle does: holds of one day change one at a time
    if (!affectedOne(await row.clone().update({ updated_at: new Date(now) }))) return MISSING_ROW
    const expired = await trx
      .from(AGENT_TABLES.quotaHolds)
      .where('actor_ref', actorRef)
      .where('day', day)
      .where('expires_at', '<=', now)
      .select('id', 'tokens')
    if (!expired.length) return null
    const reclaimed = expired.reduce((sum, hold) => sum + Number(hold.tokens), 0)
    await trx
      .from(AGENT_TABLES.quotaHolds)
      .whereIn(
        'id',
        expired.map((hold) => hold.id)
      )
      .delete()
    if (await this.#take(row, tokens, reclaimed)) {
      return this.#insertHold(trx, actorRef, day, tokens, now + leaseMs)
    }
    await row.clone().update({ reserved_tokens: trx.raw('reserved_tokens - ?', [reclaimed]) })
    return null
  }

  /** Moves `tokens` into the reservation, giving back `reclaimed`, when the limit allows */
  async #take(row: QuotaRowQuery, tokens: number, reclaimed: number) {
    const affected = await row
      .clone()
      .whereRaw('used_tokens + reserved_tokens - ? + ? <= ?', [
        reclaimed,
        tokens,
        this.#limitTokens,
      ])
      .update({ reserved_tokens: row.client.raw('reserved_tokens - ? + ?', [reclaimed, tokens]) })
    return affectedOne(affected)
  }

  async #insertHold(
    trx: TransactionClientContract,
    actorRef: string,
    day: string,
    tokens: number,
    expiresAt: number
  ): Promise<QuotaHold> {
    const hold = { actorRef, day, tokens, id: randomUUID() }
    await trx.insertQuery().table(AGENT_TABLES.quotaHolds).insert({
      id: hold.id,
      actor_ref: actorRef,
      day,
      tokens,
      expires_at: expiresAt,
    })
    return hold
  }

  /** The actor's row for the day, unless it exists; remembered so later calls skip this */
  async #createRow(actorRef: string, day: string, key: string) {
    try {
      await this.#client().insertQuery().table(AGENT_TABLES.quota).insert({
        actor_ref: actorRef,
        day,
        used_tokens: 0,
        reserved_tokens: 0,
        updated_at: new Date(),
      })
    } catch {
      // The (actor_ref, day) row exists already: the unique index refused a second one
    }
    if (this.#knownRows.size >= KNOWN_ROWS_CAP) this.#knownRows.clear()
    this.#knownRows.add(key)
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
        if (!affectedOne(deleted)) return
      }
      await row.clone().update({
        reserved_tokens: trx.raw('reserved_tokens - ?', [hold.tokens]),
        used_tokens: trx.raw('used_tokens + ?', [usedTokens]),
      })
    })
  }

  /**
   * Gives back the holds of dead instances for actor-days nobody reserves
   * again (a reservation gives back only its own actor-day's). Each hold
   * moves like a settle of nothing: its row's delete decides, so a late
   * settle or a reservation doing the same never moves its tokens twice.
   */
  async giveBackExpiredHolds(options: { dryRun?: boolean } = {}) {
    const given = { holds: 0, tokens: 0 }
    const now = this.#now()
    const expired = await this.#client()
      .from(AGENT_TABLES.quotaHolds)
      .where('expires_at', '<=', now)
      .orderBy('expires_at', 'asc')
      .select('id', 'actor_ref', 'day', 'tokens')
    for (const row of expired) {
      const hold = { id: row.id, actorRef: row.actor_ref, day: row.day, tokens: Number(row.tokens) }
      if (options.dryRun || (await this.#giveBack(hold, now))) {
        given.holds++
        given.tokens += hold.tokens
      }
    }
    return given
  }

  /** True when this call removed the hold (still expired) and gave its tokens back */
  async #giveBack(hold: Required<QuotaHold>, now: number) {
    return this.#client().transaction(async (trx) => {
      const row = this.#row(trx, hold.actorRef, hold.day)
      await row.clone().update({ updated_at: new Date(now) })
      const deleted = await trx
        .from(AGENT_TABLES.quotaHolds)
        .where('id', hold.id)
        .where('expires_at', '<=', now)
        .delete()
      if (!affectedOne(deleted)) return false
      await row.clone().update({ reserved_tokens: trx.raw('reserved_tokens - ?', [hold.tokens]) })
      return true
    })
  }

  async used(actorRef: string, day: string) {
    const row = await this.#row(this.#client(), actorRef, day).first()
    return row ? Number(row.used_tokens) : 0
  }
}
