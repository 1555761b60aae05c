import { fail, FILE } from '../config_checks.ts'
import type { WatcherDescriptor } from '../types.ts'
import {
  isQueueManager,
  isScheduleManager,
  missingQueueMethods,
  type ConsoleQueueManager,
  type ConsoleScheduleManager,
} from './contract.ts'

/** A URL segment the API can route to: the driver and queue names appear in paths */
const DRIVER = /^[A-Za-z0-9_.:-]{1,64}$/

/** What `watchers`, `queueManagers` and `scheduleManagers` resolve to */
export interface ResolvedManagers {
  watchers: WatcherDescriptor[]
  queueManagers: ConsoleQueueManager[]
  scheduleManagers: ConsoleScheduleManager[]
}

function list(value: unknown, key: string): unknown[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) fail(`Invalid "${key}" in ${FILE}: use a list of objects`)
  return value
}

/**
 * Splits `watchers` into descriptors and the managers among them (an object
 * implementing a manager contract is registered as one), checks each listed
 * manager, and keeps each object once per list: listing one object in
 * several places is allowed.
 */
export function resolveManagers(options: {
  watchers?: unknown
  queueManagers?: unknown
  scheduleManagers?: unknown
}): ResolvedManagers {
  const watchers: WatcherDescriptor[] = []
  const queues = new Set<ConsoleQueueManager>()
  const schedules = new Set<ConsoleScheduleManager>()

  list(options.queueManagers, 'queueManagers').forEach((item, index) => {
    const missing = missingQueueMethods(item)
    if (missing.length > 0) {
      fail(
        `Invalid "queueManagers[${index}]" in ${FILE}: a queue manager needs ${missing.map((name) => `"${name}"`).join(', ')}`
      )
    }
    queues.add(item as ConsoleQueueManager)
  })
  list(options.scheduleManagers, 'scheduleManagers').forEach((item, index) => {
    if (!isScheduleManager(item)) {
      fail(
        `Invalid "scheduleManagers[${index}]" in ${FILE}: a schedule manager needs a "listTasks" method`
      )
    }
    schedules.add(item)
  })
  for (const item of list(options.watchers, 'watchers')) {
    const queue = isQueueManager(item)
    const schedule = isScheduleManager(item)
    if (queue) queues.add(item)
    if (schedule) schedules.add(item)
    if (!queue && !schedule) watchers.push(item as WatcherDescriptor)
  }

  const drivers = new Map<string, ConsoleQueueManager>()
  for (const manager of queues) {
    if (!DRIVER.test(manager.driver)) {
      fail(
        `Invalid queue manager driver "${manager.driver}" in ${FILE}: use 1 to 64 letters, digits, "_", ".", ":" or "-"`
      )
    }
    if (drivers.has(manager.driver)) {
      fail(
        `Two queue managers in ${FILE} are named "${manager.driver}": each needs its own driver name`
      )
    }
    drivers.set(manager.driver, manager)
  }
  return { watchers, queueManagers: [...queues], scheduleManagers: [...schedules] }
}
