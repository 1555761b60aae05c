import { randomUUID } from 'node:crypto'
import { importOptional } from '../../shared/optional_import.ts'
import { fail, FILE } from '../config_checks.ts'
import { ConsoleQueueActionUnsupportedException, ConsoleQueueJobStateException } from '../errors.ts'
import type { ConsoleQueueJob, ConsoleQueueManager } from './contract.ts'

/** A job's stored data, the fields read and copied here */
interface StoredJobData {
  id: string
  name: string
  payload: unknown
  attempts: number
  priority?: number
  groupId?: string
  createdAt?: number
}

/** The part of `@boringnode/queue`'s adapter API the manager uses */
interface QueueAdapter {
  sizeOf(queue: string): Promise<number>
  getJob(
    jobId: string,
    queue: string
  ): Promise<{ status: string; data: StoredJobData; finishedAt?: number; error?: string } | null>
  pushOn(queue: string, job: StoredJobData): Promise<unknown>
}

interface BoringQueue {
  QueueManager: { use(adapter?: string): QueueAdapter }
}

/** The part of `config/queue.ts` that names queues */
interface QueueConfigLike {
  queues?: Record<string, unknown>
}

/** Most queues taken from config/queue.ts or the `queues` option */
const MAX_QUEUE_NAMES = 200

/**
 * A queue manager over `@adonisjs/queue` (`@boringnode/queue`), limited to
 * what its public adapter API can answer: the queues named in
 * `config/queue.ts` (or `queues`), each one's pending count, a job by id,
 * and retrying a failed one (dispatched again as a copy with a new id). The
 * adapter cannot list a queue's jobs or remove one, so those answer 501.
 */
export function queueJobs(
  options: { adapter?: string; queues?: string[] } = {}
): ConsoleQueueManager {
  if (
    options.queues !== undefined &&
    (!Array.isArray(options.queues) ||
      !options.queues.every((name) => typeof name === 'string' && name !== ''))
  ) {
    fail(`Invalid "queueJobs({ queues })" in ${FILE}: use a list of queue names`)
  }
  let boring: BoringQueue | undefined
  let queues: string[] = []
  const driver = options.adapter ? `queue:${options.adapter}` : 'queue'
  // asked each time: the queue re-creates its adapters when re-initialised (a worker in this process)
  const use = () => boring!.QueueManager.use(options.adapter)

  return {
    driver,
    async init() {
      boring = await importOptional<BoringQueue>(
        '@boringnode/queue',
        'queueJobs() in config/console.ts'
      )
      // an adapter name config/queue.ts lacks fails here, naming it, rather than on every request
      use()
      const named = new Set(options.queues ?? ['default'])
      if (!options.queues) {
        const { default: app } = await import('@adonisjs/core/services/app')
        const config = app.config.get<QueueConfigLike | undefined>('queue', undefined)
        for (const name of Object.keys(config?.queues ?? {})) named.add(name)
      }
      queues = [...named].slice(0, MAX_QUEUE_NAMES)
    },
    listQueues() {
      return queues
    },
    async counts(queue: string) {
      // the adapter counts what waits to run; other states have no public count
      return { pending: await use().sizeOf(queue) }
    },
    listJobs() {
      throw new ConsoleQueueActionUnsupportedException(
        `Queue manager "${driver}" cannot list jobs: @boringnode/queue has no public API listing a queue's jobs; open one by id`
      )
    },
    async getJob(queue: string, id: string): Promise<ConsoleQueueJob | null> {
      const record = await use().getJob(id, queue)
      if (!record) return null
      return {
        id: record.data.id,
        name: record.data.name,
        state: record.status,
        attempts: record.data.attempts,
        payload: record.data.payload,
        createdAt: record.data.createdAt ?? null,
        finishedAt: record.finishedAt ?? null,
        error: record.error ?? null,
      }
    },
    async retryJob(queue: string, id: string) {
      const record = await use().getJob(id, queue)
      if (!record) return
      if (record.status !== 'failed') {
        throw new ConsoleQueueJobStateException(
          `Job "${id}" is ${record.status}: only a failed job can be retried`
        )
      }
      const { data } = record
      await use().pushOn(queue, {
        id: randomUUID(),
        name: data.name,
        payload: data.payload,
        attempts: 0,
        priority: data.priority,
        groupId: data.groupId,
        createdAt: Date.now(),
      })
    },
  }
}
