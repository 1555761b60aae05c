import type { QuotaStore } from '../../src/agent/main.ts'

/** A clock a test moves by hand: stores read it instead of `Date.now` */
export function handClock(start = Date.UTC(2026, 0, 1, 12)) {
  let now = start
  return {
    now: () => now,
    advance(ms: number) {
      now += ms
    },
  }
}

/**
 * What a test proves of a store's leases, on its own backend: `open` makes
 * a store instance (each one an app instance) with a limit of 100 tokens
 * reading the clock passed. One instance reserves and dies; another one
 * meets the hold until its lease ends, then gets it back.
 */
export async function deadInstanceScenario(
  open: (clock: { now: () => number }) => QuotaStore | Promise<QuotaStore>
) {
  const clock = handClock()
  const dead = await open(clock)
  const alive = await open(clock)
  // A day still to come: Redis drops a day's key two days after it ends
  const day = '2030-01-01'
  const lease = 60_000
  const deadHold = await dead.reserve('erin', day, 60, lease)
  // The dead instance never settles: the other one finds the room taken until the lease ends
  const beforeLease = await alive.reserve('erin', day, 60, lease)
  clock.advance(lease - 1)
  const atLeaseEnd = await alive.reserve('erin', day, 60, lease)
  clock.advance(1)
  const afterLease = await alive.reserve('erin', day, 60, lease)
  // The dead instance settling late (a process paused, not killed) must not give the tokens twice
  await dead.settle(deadHold!, 60)
  await dead.release(deadHold!)
  const roomAfterLateSettle = await alive.reserve('erin', day, 41, lease)
  await alive.settle(afterLease!, 30)
  return {
    deadHold,
    beforeLease,
    atLeaseEnd,
    afterLease,
    roomAfterLateSettle,
    usedAfterSettle: await alive.used('erin', day),
    // 30 used: 71 more would pass the limit, 70 fill it exactly
    pastRoom: await alive.reserve('erin', day, 71, lease),
    fullRoom: await alive.reserve('erin', day, 70, lease),
  }
}

/** A hold renewed before its lease ended stays held; once renewals stop it is given back */
export async function renewedHoldScenario(
  open: (clock: { now: () => number }) => QuotaStore | Promise<QuotaStore>
) {
  const clock = handClock()
  const running = await open(clock)
  const other = await open(clock)
  const day = '2030-01-02'
  const hold = await running.reserve('frank', day, 80, 1000)
  clock.advance(900)
  await running.renew!(hold!, 1000)
  clock.advance(900)
  const whileRenewed = await other.reserve('frank', day, 80, 1000)
  clock.advance(100)
  const afterRenewedLease = await other.reserve('frank', day, 80, 1000)
  return { hold, whileRenewed, afterRenewedLease }
}

/** What every backend must answer to `deadInstanceScenario` */
export const DEAD_INSTANCE_OUTCOME = {
  beforeLease: null,
  atLeaseEnd: null,
  roomAfterLateSettle: null,
  usedAfterSettle: 30,
  pastRoom: null,
}
