import type { ApplicationService } from '@adonisjs/core/types'

/** Tokens held from an actor's budget for one model call, until it is settled or released */
export interface QuotaHold {
  actorRef: string
  /** The quota day the hold counts against (`YYYY-MM-DD` in the quota time zone) */
  day: string
  tokens: number
  /**
   * The hold's own record, set by the built-in stores: once its lease has
   * run out and another reservation gave its tokens back, settling or
   * releasing it changes nothing
   */
  id?: string
}

/** Where a built-in quota store reads the time from (`Date.now`); tests move it instead of sleeping */
export interface QuotaClock {
  now?: () => number
}

/** How long a hold lasts unless renewed, when the caller names no lease (10 minutes) */
export const DEFAULT_HOLD_LEASE_MS = 10 * 60_000

/**
 * A daily token budget per actor. The limit is the store's own business
 * (a number in its options, or a plan looked up per actor), so the gateway
 * only asks for a hold and reports what the call used.
 *
 * `reserve` must be atomic: concurrent calls for one actor and day may
 * never hold together more than the limit allows (one conditional update,
 * one Lua script).
 *
 * A hold whose instance died (a SIGKILL between reserve and settle) must
 * not charge the day forever: the built-in stores give a hold a lease of
 * `leaseMs`, renewed while the call runs, and the next reservation of that
 * actor and day gives back every hold whose lease ran out.
 */
export interface QuotaStore {
  /** Holds `tokens` for one model call; null when used + held + tokens would pass the limit */
  reserve(
    actorRef: string,
    day: string,
    tokens: number,
    leaseMs?: number
  ): Promise<QuotaHold | null>
  /** Moves a hold's lease end to `leaseMs` from now; nothing when it was given back already */
  renew?(hold: QuotaHold, leaseMs: number): Promise<void>
  /** Ends a hold and charges what the call really used */
  settle(hold: QuotaHold, usedTokens: number): Promise<void>
  /** Ends a hold charging nothing (the call never reached the model) */
  release(hold: QuotaHold): Promise<void>
  /** Tokens charged to the actor on that day */
  used(actorRef: string, day: string): Promise<number>
  /**
   * Gives back every hold whose lease ran out, of any actor and day
   * (`agent:prune` calls it); with `dryRun` only counts them. For stores
   * whose holds outlive their lease until the same actor reserves again.
   */
  giveBackExpiredHolds?(options?: { dryRun?: boolean }): Promise<{ holds: number; tokens: number }>
  /** Called once at shutdown, to close what the store opened */
  close?(): Promise<void>
}

/** What the `quota` option takes: a store, or a factory that builds one at boot */
export type QuotaStoreFactory = (app: ApplicationService) => Promise<QuotaStore>

/** True for an object that speaks the quota contract */
export function isQuotaStore(value: unknown): value is QuotaStore {
  const store = value as Partial<QuotaStore> | null | undefined
  return (
    typeof store === 'object' &&
    store !== null &&
    typeof store.reserve === 'function' &&
    typeof store.settle === 'function' &&
    typeof store.release === 'function' &&
    typeof store.used === 'function'
  )
}
