import type { Logger } from '@adonisjs/core/logger'
import debug from '../debug.ts'
import {
  ConsoleManagerUnavailableException,
  ConsoleNotFoundException,
  ConsoleQueueActionUnsupportedException,
  ConsoleQueueJobStateException,
} from '../errors.ts'
import type { ConsoleQueueManager, ConsoleScheduleManager } from './contract.ts'

/** Longest error text of a failing manager passed to clients and logs */
const MAX_ERROR_LENGTH = 300

/** A manager's failure as one bounded line */
export function failureText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error)
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}…` : text
}

/**
 * The queue and schedule managers of config/console.ts, each object
 * initialised once however many lists name it. A failed `init()` is logged
 * and tried again on the next use, so a backend that was down at boot is
 * picked up once it answers.
 */
export class QueueBoard {
  readonly queueManagers: ReadonlyMap<string, ConsoleQueueManager>
  readonly scheduleManagers: readonly ConsoleScheduleManager[]
  #inits = new Map<object, Promise<void>>()
  #logger?: Logger

  constructor(
    queueManagers: ConsoleQueueManager[],
    scheduleManagers: ConsoleScheduleManager[],
    logger?: Logger
  ) {
    this.queueManagers = new Map(queueManagers.map((manager) => [manager.driver, manager]))
    this.scheduleManagers = scheduleManagers
    this.#logger = logger
  }

  /** Initialises every distinct manager; failures are logged, never thrown */
  async init() {
    const all = new Set<ConsoleQueueManager | ConsoleScheduleManager>([
      ...this.queueManagers.values(),
      ...this.scheduleManagers,
    ])
    await Promise.all([...all].map((manager) => this.ready(manager).catch(() => {})))
  }

  /** Resolves once `manager` is initialised; rejects with a 503 naming it when `init()` threw */
  ready(manager: ConsoleQueueManager | ConsoleScheduleManager): Promise<void> {
    let pending = this.#inits.get(manager)
    if (!pending) {
      const name = manager.driver ?? 'schedule'
      pending = Promise.resolve()
        .then(() => manager.init?.())
        .then(() => debug('manager %s initialised', name))
        .catch((error) => {
          // forgotten so the next request tries again
          this.#inits.delete(manager)
          const text = failureText(error)
          this.#logger?.warn(`console manager "${name}" failed to initialise: ${text}`)
          throw new ConsoleManagerUnavailableException(`Manager "${name}" is unavailable: ${text}`)
        })
      this.#inits.set(manager, pending)
    }
    return pending
  }

  /** The initialised queue manager named `driver`, or a 404 naming it */
  async queueManager(driver: string): Promise<ConsoleQueueManager> {
    const manager = this.queueManagers.get(driver)
    if (!manager) throw new ConsoleNotFoundException(`Queue manager "${driver}" not found`)
    await this.ready(manager)
    return manager
  }

  /**
   * Runs a manager's call, turning its throw into a 503 naming the manager;
   * the console's own answers a manager may throw (404, 409, 501) pass as they are
   */
  async ask<T>(name: string, call: () => T | Promise<T>): Promise<T> {
    try {
      return await call()
    } catch (error) {
      if (
        error instanceof ConsoleManagerUnavailableException ||
        error instanceof ConsoleNotFoundException ||
        error instanceof ConsoleQueueJobStateException ||
        error instanceof ConsoleQueueActionUnsupportedException
      ) {
        throw error
      }
      const text = failureText(error)
      debug('manager %s failed: %s', name, text)
      throw new ConsoleManagerUnavailableException(`Manager "${name}" failed: ${text}`, {
        cause: error,
      })
    }
  }
}
