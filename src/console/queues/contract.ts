/**
 * A job as a queue manager describes it to the console. `payload` is redacted
 * and bounded by the console before it leaves the API.
 */
export interface ConsoleQueueJob {
  id: string
  name: string
  /** The manager's own state name: `waiting`, `active`, `delayed`, `completed`, `failed`... */
  state: string
  attempts?: number
  payload?: unknown
  /** Unix ms, or an ISO date */
  createdAt?: number | string | null
  finishedAt?: number | string | null
  error?: string | null
}

/** One page of jobs; `nextCursor` is handed back to `listJobs` for the next page */
export interface ConsoleQueueJobPage {
  jobs: ConsoleQueueJob[]
  nextCursor?: string | null
}

/** What the console asks a queue manager for one page of jobs */
export interface ConsoleJobListOptions {
  /** One state, or every state when undefined */
  state?: string
  /** At most this many jobs; the console never asks for more than 100 */
  limit: number
  /** A `nextCursor` the manager returned before */
  cursor?: string
}

/**
 * A live queue backend the console reads (and, behind `authorizeAction`,
 * acts on). `driver` names it in the API's URLs, so it is unique per app.
 */
export interface ConsoleQueueManager {
  driver: string
  /** Called once before the first use, however many times the object is listed */
  init(): Promise<void> | void
  listQueues(): Promise<string[]> | string[]
  /** Jobs per state: `{ waiting: 3, failed: 1 }` */
  counts(queue: string): Promise<Record<string, number>> | Record<string, number>
  listJobs(
    queue: string,
    options: ConsoleJobListOptions
  ): Promise<ConsoleQueueJobPage> | ConsoleQueueJobPage
  /** The job, or null when the queue holds no such id */
  getJob(queue: string, id: string): Promise<ConsoleQueueJob | null> | ConsoleQueueJob | null
  /** Puts a failed job back to run again; without it the API answers 501 */
  retryJob?(queue: string, id: string): Promise<void> | void
  /** Deletes a job; without it the API answers 501 */
  removeJob?(queue: string, id: string): Promise<void> | void
}

/** One scheduled task as a schedule manager lists it */
export interface ConsoleScheduledTask {
  name: string
  /** A cron expression or a readable interval (`every 5m`) */
  expression: string
  /** Unix ms, an ISO date or a Date; null when it will not run again */
  nextRunAt?: number | string | Date | null
  lastRunAt?: number | string | Date | null
  /** `succeeded`, `failed`, `running`, or the manager's own word */
  lastStatus?: string | null
}

/** A scheduler the console lists (read only) */
export interface ConsoleScheduleManager {
  /** Names it in `GET /schedules`; `'schedule'` when absent */
  driver?: string
  /** Called once before the first use, when present */
  init?(): Promise<void> | void
  listTasks(): Promise<ConsoleScheduledTask[]> | ConsoleScheduledTask[]
}

/** The methods an object needs to be a queue manager */
export const QUEUE_MANAGER_METHODS = ['init', 'listQueues', 'counts', 'listJobs', 'getJob'] as const

/** The methods of the queue-manager contract `value` lacks (`driver` included) */
export function missingQueueMethods(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return ['driver', ...QUEUE_MANAGER_METHODS]
  const object = value as Record<string, unknown>
  const missing: string[] = []
  if (typeof object.driver !== 'string' || object.driver === '') missing.push('driver')
  for (const method of QUEUE_MANAGER_METHODS) {
    if (typeof object[method] !== 'function') missing.push(method)
  }
  return missing
}

/** Whether `value` structurally implements the queue-manager contract */
export function isQueueManager(value: unknown): value is ConsoleQueueManager {
  return missingQueueMethods(value).length === 0
}

/** Whether `value` structurally implements the schedule-manager contract */
export function isScheduleManager(value: unknown): value is ConsoleScheduleManager {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as Record<string, unknown>).listTasks === 'function'
  )
}
