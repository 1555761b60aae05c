import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { publishConsoleEvent } from '../events.ts'
import type { Logger } from '@adonisjs/core/logger'
import debug from '../debug.ts'
import { ConsolePruneBusyException } from '../errors.ts'
import type { ConsoleStore, PruneResult } from '../stores/contract.ts'
import type { ResolvedPrune } from '../types.ts'
import { pruneEntries } from './pruner.ts'

/** The one lease name every instance's prune takes */
export const PRUNE_LEASE = 'console:prune'
/**
 * The owner a finished prune leaves on the lease until the cycle ends: the
 * other instances' scheduled prunes skip that cycle, a prune asked for by
 * hand may still take it
 */
export const PRUNED_THIS_CYCLE = 'pruned'

type Release = () => Promise<void>

/**
 * Runs prunes one at a time in this process, each under the prune lock so a
 * fleet never prunes twice at once, and on a timer when `prune.intervalMs` is
 * set. With the default lease row a fleet also prunes once per interval: the
 * instance that pruned leaves the row marked until the interval ends.
 */
export class PruneScheduler {
  #store: ConsoleStore
  #options: ResolvedPrune
  #logger?: Logger
  #timer?: NodeJS.Timeout
  #running?: Promise<PruneResult>
  #abort = new AbortController()
  #warned = new Set<string>()

  constructor(store: ConsoleStore, options: ResolvedPrune, logger?: Logger) {
    this.#store = store
    this.#options = options
    this.#logger = logger
  }

  /**
   * One prune under the lock; `E_CONSOLE_PRUNE_BUSY` when another process (or
   * this one) is pruning. `scheduled` prunes also skip a cycle another
   * instance has pruned already.
   */
  prune(now?: number, scheduled = false): Promise<PruneResult> {
    if (this.#running) return Promise.reject(new ConsolePruneBusyException())
    const run = this.#underLock(now, scheduled).finally(() => {
      this.#running = undefined
    })
    this.#running = run
    return run
  }

  async #underLock(now: number | undefined, scheduled: boolean) {
    const release = await this.#acquire(scheduled)
    if (release === null) throw new ConsolePruneBusyException()
    try {
      const startedAt = performance.now()
      const deleted = await pruneEntries(this.#store, this.#options, now, this.#abort.signal)
      publishConsoleEvent('prune.completed', {
        deleted,
        scheduled,
        durationMs: Math.round(performance.now() - startedAt),
      })
      return deleted
    } finally {
      await release?.()
    }
  }

  /** The lock's release, undefined with `lock: false`, or null when it is held elsewhere */
  async #acquire(scheduled: boolean): Promise<Release | null | undefined> {
    const { lock, lockTtlMs, intervalMs } = this.#options
    if (lock === false) return undefined
    if (lock !== 'storage') return lock.acquire(PRUNE_LEASE, lockTtlMs)
    const owner = randomUUID()
    const startedAt = Date.now()
    const taken = await this.#store.acquireLease({
      name: PRUNE_LEASE,
      owner,
      expiresAt: startedAt + lockTtlMs,
      yieldingOwner: scheduled ? undefined : PRUNED_THIS_CYCLE,
    })
    if (!taken) return null
    return () =>
      this.#store.releaseLease(
        PRUNE_LEASE,
        owner,
        intervalMs === undefined
          ? undefined
          : { owner: PRUNED_THIS_CYCLE, expiresAt: startedAt + intervalMs }
      )
  }

  /** Prunes every `intervalMs` without keeping the process alive; the first after one interval */
  start() {
    const interval = this.#options.intervalMs
    if (interval === undefined || this.#timer) return
    this.#timer = setInterval(() => void this.#tick(), interval)
    this.#timer.unref()
  }

  async #tick() {
    try {
      const deleted = await this.prune(undefined, true)
      debug('scheduled prune: %o', deleted)
    } catch (error) {
      if (error instanceof ConsolePruneBusyException) {
        debug('scheduled prune skipped: another prune holds the lock')
        return
      }
      // once per kind of failure: a missing table would otherwise log every interval
      const kind = (error as { code?: string })?.code ?? (error as Error)?.message
      if (this.#warned.has(kind)) return debug('scheduled prune failed again: %s', kind)
      this.#warned.add(kind)
      this.#logger?.error(
        { err: error },
        `console: the scheduled prune failed (${(error as Error)?.message})`
      )
    }
  }

  /** Stops the timer and any prune in progress at its next batch, and waits for it */
  async stop() {
    clearInterval(this.#timer)
    this.#timer = undefined
    this.#abort.abort()
    await this.#running?.catch(() => {})
  }
}
