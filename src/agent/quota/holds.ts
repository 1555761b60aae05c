import type { TokenUsage } from '../model/port.ts'
import type { QuotaHold, QuotaStore } from './contract.ts'

/** The actor's daily budget cannot hold another model call */
export class QuotaExceededError extends Error {}

/**
 * Holds the reservation of one model call (`tokens`, or `reserveTokens`
 * when the call has no output cap to estimate from), or throws when the
 * budget cannot; null when quotas are off.
 */
export async function holdQuota(
  quota: { store: QuotaStore; reserveTokens: number } | undefined,
  actorRef: string,
  day: string,
  tokens?: number
) {
  if (!quota) return null
  const hold = await quota.store.reserve(actorRef, day, tokens ?? quota.reserveTokens)
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
