import { randomUUID } from 'node:crypto'
import type { Logger } from '@adonisjs/core/logger'
import debug from '../debug.ts'
import { ConsolePruneBusyException } from '../errors.ts'
import type { ConsoleStore, PruneResult } from '../stores/contract.ts'
import type { PruneLock, ResolvedPrune } from '../types.ts'
import { pruneEntries } from './pruner.ts'

/** The one lease name every instance's prune takes */
export const PRUNE_LEASE = 'console:prune'

/** The default prune lock: a lease row in the console's own storage */
export function storageLock(store: ConsoleStore): PruneLock {
  return {
    async acquire(name, ttlMs) {
      const owner = randomUUID()
      const taken = await store.acquireLease({ name, owner, expiresAt: Date.now() + ttlMs })
      return taken ? () => store.releaseLease(name, owner) : null
    },
  }
}

/**
 * Runs prunes one at a time in this process, each under the prune lock so a
 * fleet prunes once per cycle, and on a timer when `prune.intervalMs` is set.
 */
export class PruneScheduler {
  #store: ConsoleStore
  #options: ResolvedPrune
  #lock?: PruneLock
  #logger?: Logger
  #timer?: NodeJS.Timeout
  #running?: Promise<PruneResult>
  #abort = new AbortController()
  #warned = new Set<string>()

  constructor(store: ConsoleStore, options: ResolvedPrune, logger?: Logger) {
    this.#store = store
    this.#options = options
    this.#logger = logger
    this.#lock =
      options.lock === 'storage'
        ? storageLock(store)
        : options.lock === false
          ? undefined
          : options.lock
  }

  /**
   * One prune under the lock; `E_CONSOLE_PRUNE_BUSY` when another process (or
   * this one) is pruning.
   */
  prune(now?: number): Promise<PruneResult> {
    if (this.#running) return Promise.reject(new ConsolePruneBusyException())
    const run = this.#underLock(now).finally(() => {
      this.#running = undefined
    })
    this.#running = run
    return run
  }

  async #underLock(now?: number) {
    const release = this.#lock
      ? await this.#lock.acquire(PRUNE_LEASE, this.#options.lockTtlMs)
      : undefined
    if (release === null) throw new ConsolePruneBusyException()
    try {
      return await pruneEntries(this.#store, this.#options, now, this.#abort.signal)
    } finally {
      await release?.()
    }
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
      const deleted = await this.prune()
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
