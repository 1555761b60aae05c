import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { defineConfig as queueConfig, drivers, Job, Locator } from '@adonisjs/queue'
import { QueueManager, Worker } from '@boringnode/queue'
import { redis as redisAdapter } from '@boringnode/queue/drivers/redis_adapter'
import { consoleApp } from './helpers.ts'
import { createRedis, SERVICES } from '../helpers.ts'
import { queueJobs } from '../../src/console/main.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

class SendReceipt extends Job<{ orderId: number; password: string }> {
  static options = { name: 'SendReceipt', queue: 'emails' }
  async execute() {}
}

/** Fails once and is kept in the failed set, so it can be retried */
class ChargeOrder extends Job<{ orderId: number }> {
  static options = { name: 'ChargeOrder', queue: 'emails', maxRetries: 0, removeOnFail: false }
  async execute() {
    throw new Error(`card declined for order ${this.payload.orderId}`)
  }
}

Locator.register('SendReceipt', SendReceipt)
Locator.register('ChargeOrder', ChargeOrder)

/** The JSON body of a response */
async function json(pending: Promise<Response>): Promise<any> {
  const response = await pending
  return response.json()
}

/** An app whose default queue adapter is Redis under a prefix of its own, `emails` named in config/queue.ts */
async function queueJobsApp(config: ConsoleConfig = {}) {
  const prefix = `atrium-queue-jobs-${randomUUID()}::`
  createRedis(prefix)
  const adapter = () => redisAdapter({ ...SERVICES.redis, keyPrefix: prefix })
  const queueSettings = queueConfig({
    default: 'redis',
    adapters: { sync: drivers.sync(), redis: adapter() },
    queues: { emails: {} },
  })
  const app = await consoleApp({
    config: {
      queueManagers: [queueJobs()],
      authorizeAction: () => true,
      redact: { keys: ['password'] },
      ...config,
    },
    providers: [() => import('@adonisjs/queue/queue_provider')],
    appConfig: { queue: queueSettings },
  })
  /** Runs the next job of `emails` in a worker of its own */
  const work = async () => {
    const worker = new Worker({
      default: 'redis',
      adapters: { redis: adapter() },
      worker: { idleDelay: 10, gracefulShutdown: false },
    })
    try {
      let cycle = await worker.processCycle(['emails'])
      while (cycle && cycle.type !== 'completed') cycle = await worker.processCycle(['emails'])
    } finally {
      await worker.stop()
      // the worker shares the QueueManager singleton and closed its adapters: the app's come back
      await QueueManager.init({
        default: 'redis',
        adapters: { redis: adapter() },
        queues: { emails: {} },
      })
    }
  }
  return { ...app, work }
}

test.group('Console | @adonisjs/queue jobs', () => {
  test('queueJobs() lists the queues of config/queue.ts with their pending counts, and opens a job by id', async ({
    assert,
  }) => {
    const { api } = await queueJobsApp()
    const { jobId } = await SendReceipt.dispatch({ orderId: 7, password: 'receipt-secret-9' })
    await SendReceipt.dispatch({ orderId: 8, password: 'receipt-secret-9' })

    const queues = await api('/queues')
    assert.equal(queues.status, 200)
    const { data } = (await queues.json()) as { data: any[] }
    assert.deepEqual(data, [
      {
        driver: 'queue',
        error: null,
        queues: [
          { name: 'default', counts: { pending: 0 } },
          { name: 'emails', counts: { pending: 2 } },
        ],
      },
    ])

    const job = await api(`/queues/queue/emails/jobs/${jobId}`)
    assert.equal(job.status, 200)
    const { data: shown } = (await job.json()) as { data: any }
    assert.equal(shown.id, jobId)
    assert.equal(shown.name, 'SendReceipt')
    assert.equal(shown.state, 'pending')
    assert.equal(shown.attempts, 0)
    assert.equal(shown.payload.orderId, 7)
    assert.notEqual(shown.payload.password, 'receipt-secret-9')
    assert.isAbove(shown.createdAt, Date.now() - 60_000)

    const missing = await api(`/queues/queue/emails/jobs/${randomUUID()}`)
    assert.equal(missing.status, 404)
    const unknownQueue = await api(`/queues/queue/reports/jobs/${jobId}`)
    assert.equal(unknownQueue.status, 404)
  })

  test('listing jobs and removing one answer 501: the queue has no public API for them', async ({
    assert,
  }) => {
    const { api } = await queueJobsApp()
    const { jobId } = await SendReceipt.dispatch({ orderId: 1, password: 'x' })

    const list = await api('/queues/queue/emails/jobs?state=pending')
    assert.equal(list.status, 501)
    const body = (await list.json()) as { code?: string; errors?: { code: string }[] }
    assert.include(JSON.stringify(body), 'E_CONSOLE_QUEUE_ACTION_UNSUPPORTED')
    assert.include(JSON.stringify(body), 'cannot list jobs')

    const remove = await api(`/queues/queue/emails/jobs/${jobId}`, { method: 'DELETE' })
    assert.equal(remove.status, 501)
    // still there
    const kept = await api(`/queues/queue/emails/jobs/${jobId}`)
    assert.equal(kept.status, 200)
  })

  test('a failed job is retried as a copy with a new id; a job that has not failed is a 409', async ({
    assert,
  }) => {
    const { api, work } = await queueJobsApp()
    const { jobId: pendingId } = await SendReceipt.dispatch({ orderId: 2, password: 'x' })
    const refused = await api(`/queues/queue/emails/jobs/${pendingId}/retry`, { method: 'POST' })
    assert.equal(refused.status, 409)
    assert.include(await refused.text(), 'only a failed job can be retried')

    await work() // runs SendReceipt
    const { jobId } = await ChargeOrder.dispatch({ orderId: 3 })
    await work()
    const failed = await json(api(`/queues/queue/emails/jobs/${jobId}`))
    assert.equal(failed.data.state, 'failed')
    assert.equal(failed.data.error, 'card declined for order 3')
    assert.isNumber(failed.data.finishedAt)

    const retry = await api(`/queues/queue/emails/jobs/${jobId}/retry`, { method: 'POST' })
    assert.equal(retry.status, 200)
    assert.deepEqual(((await retry.json()) as { data: unknown }).data, {
      driver: 'queue',
      queue: 'emails',
      id: jobId,
      action: 'retried',
    })
    const { data } = await json(api('/queues'))
    assert.deepEqual(data[0].queues[1], { name: 'emails', counts: { pending: 1 } })
  })

  test('queueJobs({ queues }) lists the queues it names; anything but a list of names is a config error', async ({
    assert,
  }) => {
    const { api } = await queueJobsApp({ queueManagers: [queueJobs({ queues: ['emails'] })] })
    const { data } = await json(api('/queues'))
    assert.deepEqual(
      data[0].queues.map((queue: { name: string }) => queue.name),
      ['emails']
    )
    assert.throws(
      () => queueJobs({ queues: 'emails' as any }),
      /Invalid "queueJobs\(\{ queues \}\)" in config\/console.ts: use a list of queue names/
    )
  })
})
