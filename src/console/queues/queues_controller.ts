import type { HttpContext } from '@adonisjs/core/http'
import {
  ConsoleInvalidQueryException,
  ConsoleNotFoundException,
  ConsoleQueueActionUnsupportedException,
} from '../errors.ts'
import type { ConsoleManager } from '../manager.ts'
import { redactValue } from '../redact.ts'
import { failureText, type QueueBoard } from './board.ts'
import type { ConsoleQueueJob, ConsoleQueueManager, ConsoleScheduledTask } from './contract.ts'

/** Jobs per page when `limit` is absent, and the most one page may ask for */
export const DEFAULT_JOBS_LIMIT = 25
export const MAX_JOBS_LIMIT = 100
/** Queues listed per manager, and tasks per schedule manager: a backend may hold thousands */
export const MAX_QUEUES = 200
export const MAX_TASKS = 500

const STATE = /^[A-Za-z_-]{1,32}$/
const MAX_ID_LENGTH = 256

function invalid(parameter: string, message: string): never {
  throw new ConsoleInvalidQueryException(message, parameter)
}

function one(qs: Record<string, unknown>, name: string): string | undefined {
  const value = qs[name]
  if (value === undefined || value === '') return undefined
  if (typeof value !== 'string') invalid(name, `"${name}" must be given once`)
  return value
}

/** A date a manager returned, as Unix ms; anything unreadable is null */
function instant(value: unknown): number | null {
  if (value === null || value === undefined) return null
  const ms = value instanceof Date ? value.getTime() : new Date(value as string | number).getTime()
  return Number.isFinite(ms) ? ms : null
}

/**
 * The queue and schedule API: `GET /queues`, a queue's jobs by state
 * (paged), one job, and the two job actions behind `authorizeAction`
 * (`retry a job`, `remove a job`), then `GET /schedules`. What a manager
 * returns is bounded and its payloads redacted before it leaves.
 */
export class QueuesController {
  #manager: ConsoleManager
  #board: QueueBoard

  constructor(manager: ConsoleManager, board: QueueBoard) {
    this.#manager = manager
    this.#board = board
  }

  #job(job: ConsoleQueueJob) {
    const bounds = this.#manager.config.redact
    return {
      id: text(job.id),
      name: text(job.name),
      state: text(job.state),
      attempts: typeof job.attempts === 'number' ? job.attempts : null,
      createdAt: instant(job.createdAt),
      finishedAt: instant(job.finishedAt),
      error: job.error ? redactValue(String(job.error), bounds) : null,
      payload: redactValue(job.payload, bounds),
    }
  }

  /** The manager and queue of the URL, or a 404 naming the one that does not exist */
  async #queue(ctx: HttpContext): Promise<[ConsoleQueueManager, string]> {
    const { driver, queue } = ctx.params as { driver: string; queue: string }
    const manager = await this.#board.queueManager(driver)
    const queues = await this.#board.ask(driver, () => manager.listQueues())
    if (!Array.isArray(queues) || !queues.includes(queue)) {
      throw new ConsoleNotFoundException(`Queue "${queue}" not found in "${driver}"`)
    }
    return [manager, queue]
  }

  #jobId(ctx: HttpContext): string {
    const id = ctx.params.id as string
    if (id.length > MAX_ID_LENGTH) invalid('id', `"id" must be at most ${MAX_ID_LENGTH} characters`)
    return id
  }

  /** `GET /queues`: every manager, its queues and their counts per state */
  index = async () => {
    const data = []
    for (const manager of this.#board.queueManagers.values()) {
      try {
        await this.#board.ready(manager)
        const names = await this.#board.ask(manager.driver, () => manager.listQueues())
        const queues = []
        for (const name of names.slice(0, MAX_QUEUES)) {
          const counts = await this.#board.ask(manager.driver, () => manager.counts(name))
          queues.push({ name: text(name), counts: numericCounts(counts) })
        }
        data.push({ driver: manager.driver, queues, error: null })
      } catch (error) {
        // one failing backend leaves the others listed
        data.push({ driver: manager.driver, queues: [], error: failureText(error) })
      }
    }
    return { data }
  }

  /** `GET /queues/:driver/:queue/jobs?state=&limit=&cursor=` */
  jobs = async (ctx: HttpContext) => {
    const qs = ctx.request.qs()
    const state = one(qs, 'state')
    if (state !== undefined && !STATE.test(state)) {
      invalid('state', '"state" must be 1 to 32 letters, "_" or "-"')
    }
    let limit = DEFAULT_JOBS_LIMIT
    const rawLimit = one(qs, 'limit')
    if (rawLimit !== undefined) {
      limit = /^\d{1,3}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_JOBS_LIMIT) {
        invalid('limit', `"limit" must be a whole number from 1 to ${MAX_JOBS_LIMIT}`)
      }
    }
    const cursor = one(qs, 'cursor')
    if (cursor !== undefined && cursor.length > MAX_ID_LENGTH) {
      invalid('cursor', `"cursor" must be at most ${MAX_ID_LENGTH} characters`)
    }
    const [manager, queue] = await this.#queue(ctx)
    const page = await this.#board.ask(manager.driver, () =>
      manager.listJobs(queue, { state, limit, cursor })
    )
    const jobs = Array.isArray(page?.jobs) ? page.jobs : []
    const nextCursor = typeof page?.nextCursor === 'string' ? page.nextCursor : null
    // a manager returning more than asked is cut, never passed through
    return { data: jobs.slice(0, limit).map((job) => this.#job(job)), nextCursor }
  }

  /** `GET /queues/:driver/:queue/jobs/:id` */
  show = async (ctx: HttpContext) => {
    const id = this.#jobId(ctx)
    const [manager, queue] = await this.#queue(ctx)
    const job = await this.#board.ask(manager.driver, () => manager.getJob(queue, id))
    if (!job) throw new ConsoleNotFoundException(`Job "${id}" not found in "${queue}"`)
    return { data: this.#job(job) }
  }

  /** `POST /queues/:driver/:queue/jobs/:id/retry` */
  retry = (ctx: HttpContext) => this.#act(ctx, 'retry a job', 'retryJob')

  /** `DELETE /queues/:driver/:queue/jobs/:id` */
  remove = (ctx: HttpContext) => this.#act(ctx, 'remove a job', 'removeJob')

  async #act(ctx: HttpContext, action: string, method: 'retryJob' | 'removeJob') {
    await this.#manager.gates.authorizeAction(ctx, action)
    const id = this.#jobId(ctx)
    const [manager, queue] = await this.#queue(ctx)
    const run = manager[method]
    if (typeof run !== 'function') {
      throw new ConsoleQueueActionUnsupportedException(
        `Queue manager "${manager.driver}" does not implement ${method}`
      )
    }
    const job = await this.#board.ask(manager.driver, () => manager.getJob(queue, id))
    if (!job) throw new ConsoleNotFoundException(`Job "${id}" not found in "${queue}"`)
    await this.#board.ask(manager.driver, () => run.call(manager, queue, id))
    return {
      data: {
        driver: manager.driver,
        queue,
        id,
        action: method === 'retryJob' ? 'retried' : 'removed',
      },
    }
  }

  /** `GET /schedules`: each schedule manager's tasks */
  schedules = async () => {
    const data = []
    for (const manager of this.#board.scheduleManagers) {
      const driver = manager.driver ?? 'schedule'
      try {
        await this.#board.ready(manager)
        const tasks = await this.#board.ask(driver, () => manager.listTasks())
        data.push({ driver, tasks: tasks.slice(0, MAX_TASKS).map(task), error: null })
      } catch (error) {
        data.push({ driver, tasks: [], error: failureText(error) })
      }
    }
    return { data }
  }
}

/** Longest name, id, state or expression passed on from a manager */
const MAX_TEXT = 255

/** A manager's short field as bounded text */
function text(value: unknown): string {
  const string = String(value ?? '')
  return string.length > MAX_TEXT ? `${string.slice(0, MAX_TEXT)}…` : string
}

function task(value: ConsoleScheduledTask) {
  return {
    name: text(value.name),
    expression: text(value.expression),
    nextRunAt: instant(value.nextRunAt),
    lastRunAt: instant(value.lastRunAt),
    lastStatus: value.lastStatus ? text(value.lastStatus) : null,
  }
}

/** Counts kept only where they are numbers: a manager's extra fields are not passed on */
function numericCounts(counts: Record<string, number>): Record<string, number> {
  const kept: Record<string, number> = {}
  for (const [state, count] of Object.entries(counts ?? {}).slice(0, 32)) {
    if (typeof count === 'number' && Number.isFinite(count)) kept[state] = count
  }
  return kept
}
