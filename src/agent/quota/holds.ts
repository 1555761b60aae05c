import type { TokenUsage } from '../model/port.ts'
import debug from '../debug.ts'
import type { QuotaHold, QuotaStore } from './contract.ts'

/** The gateway's quota: the store, the hold of a call without output cap, the lease of a hold */
export interface GatewayQuota {
  store: QuotaStore
  reserveTokens: number
  holdLeaseMs: number
}

/** The actor's daily budget cannot hold another model call */
export class QuotaExceededError extends Error {}

/**
 * Holds the reservation of one model call (`tokens`, or `reserveTokens`
 * when the call has no output cap to estimate from), or throws when the
 * budget cannot; null when quotas are off.
 */
export async function holdQuota(
  quota: GatewayQuota | undefined,
  actorRef: string,
  day: string,
  tokens?: number
) {
  if (!quota) return null
  const hold = await quota.store.reserve(
    actorRef,
    day,
    tokens ?? quota.reserveTokens,
    quota.holdLeaseMs
  )
  if (!hold) throw new QuotaExceededError()
  return hold
}

/**
 * Charges a call's hold what it used (the whole hold when the provider
 * reported nothing, never zero), or releases it when nothing was billed;
 * nothing to do without a hold
 */
export async function endHold(
  quota: { store: QuotaStore } | undefined,
  hold: QuotaHold | null,
  usage: TokenUsage,
  billed: boolean
) {
  if (!quota || !hold) return
  const { store } = quota
  if (!billed && !usage.known) return store.release(hold)
  const used = usage.known
    ? usage.uncachedInputTokens +
      usage.cacheReadTokens +
      usage.cacheWriteTokens +
      usage.outputTokens +
      usage.reasoningTokens
    : hold.tokens
  await store.settle(hold, used)
}

/**
 * Renews a hold's lease every third of it while its call runs, so only a
 * hold whose instance died outlives its lease; returns the stop. A failed
 * renewal is logged and tried again at the next tick.
 */
export function keepHold(quota: GatewayQuota | undefined, hold: QuotaHold | null) {
  const store = quota?.store
  if (!store?.renew || !hold) return () => {}
  const renew = store.renew.bind(store)
  const timer = setInterval(
    () => {
      renew(hold, quota!.holdLeaseMs).catch((error: Error) =>
        debug('quota hold renewal failed: %s', error?.message)
      )
    },
    Math.max(1, Math.floor(quota!.holdLeaseMs / 3))
  )
  timer.unref()
  return () => clearInterval(timer)
}
