import { test } from '@japa/runner'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { defineConfig as queueConfig, drivers, fixedBackoff, Job, Locator } from '@adonisjs/queue'
import { Worker } from '@boringnode/queue'
import { redis as redisAdapter } from '@boringnode/queue/drivers/redis_adapter'
import type { Logger } from '@adonisjs/core/logger'
import { BaseCommand, ListLoader } from '@adonisjs/core/ace'
import { consoleApp } from './helpers.ts'
import { createRedis, SERVICES } from '../helpers.ts'
import { watchers } from '../../src/console/main.ts'
import type { ConsoleConfig, ConsoleEntry } from '../../src/console/types.ts'

/** What the jobs below reach of the app: its logger, and how often FlakyJob ran */
const state: { logger?: Logger; flakyRuns: number } = { flakyRuns: 0 }

class CardDeclined extends Error {}

class SendInvoice extends Job<{ invoiceId: number; password: string }> {
  static options = { name: 'SendInvoice' }
  async execute() {
    state.logger!.info(`invoice ${this.payload.invoiceId} sent`)
  }
}

class ChargeCard extends Job<{ invoiceId: number }> {
  static options = { name: 'ChargeCard', maxRetries: 0 }
  async execute() {
    throw new CardDeclined(`card declined for invoice ${this.payload.invoiceId}`)
  }
}

/** Fails on its first attempt, succeeds on its second */
class FlakyJob extends Job<{ invoiceId: number }> {
  static options = { name: 'FlakyJob', retry: { maxRetries: 1, backoff: fixedBackoff(1) } }
  async execute() {
    state.flakyRuns++
    if (this.context.attempt === 1) throw new Error('mail server busy')
  }
}

/** Takes about 20 ms, ten times the slowMs its test sets */
class BuildReport extends Job<{}> {
  static options = { name: 'BuildReport' }
  async execute() {
    await sleep(20)
  }
}

/** Never registered with the Locator: the sync adapter cannot run it */
class Unregistered extends Job<{}> {
  static options = { name: 'Unregistered' }
  async execute() {}
}

for (const JobClass of [SendInvoice, ChargeCard, FlakyJob, BuildReport]) {
  Locator.register(JobClass.options.name, JobClass)
}

/**
 * An app with `@adonisjs/queue` (the sync adapter by default, and Redis under
 * `redisPrefix` when given) whose routes dispatch the jobs above.
 */
async function queueApp(config: ConsoleConfig, redisPrefix?: string) {
  const app = await consoleApp({
    config: { buffer: { flushIntervalMs: 60_000 }, ...config },
    providers: [() => import('@adonisjs/queue/queue_provider')],
    appConfig: {
      queue: queueConfig({
        default: 'sync',
        adapters: {
          sync: drivers.sync(),
          ...(redisPrefix
            ? { redis: redisAdapter({ ...SERVICES.redis, keyPrefix: redisPrefix }) }
            : {}),
        },
      }),
    },
    routes(router) {
      router.get('/invoices/:id/send', async ({ params }) => {
        const { jobId } = await SendInvoice.dispatch({
          invoiceId: Number(params.id),
          password: 'job-secret-7',
        })
        return { jobId }
      })
      router.get('/invoices/:id/charge', async ({ params }) => {
        await ChargeCard.dispatch({ invoiceId: Number(params.id) })
        await FlakyJob.dispatch({ invoiceId: Number(params.id) })
        return { ok: true }
      })
      router.get('/reports', async () => {
        await BuildReport.dispatch({})
        return { ok: true }
      })
      router.get('/invoices/:id/later', async ({ params }) => {
        const { jobId } = await SendInvoice.dispatch({
          invoiceId: Number(params.id),
          password: 'job-secret-7',
        })
          .with('redis')
          .toQueue('invoices')
        return { jobId }
      })
    },
  })
  state.logger = await app.app.container.make('logger')
  state.flakyRuns = 0
  return app
}

/** The job id a dispatching route answers with */
async function dispatchedJobId(url: string): Promise<string> {
  const response = await fetch(url)
  const body = (await response.json()) as { jobId: string }
  return body.jobId
}

type Manager = Awaited<ReturnType<typeof consoleApp>>['manager']

/** Every stored entry of the type, oldest first */
async function stored(manager: Manager, type: 'job' | 'request' | 'log') {
  await manager.recorder.flush()
  const { data } = await manager.store.list({ type, limit: 50 })
  return Promise.all(data.reverse().map((entry) => manager.store.find(entry.id))) as Promise<
    ConsoleEntry[]
  >
}

const executions = (entries: ConsoleEntry[]) =>
  entries.filter((e) => e.content.kind === 'execution')
const dispatches = (entries: ConsoleEntry[]) => entries.filter((e) => e.content.kind === 'dispatch')

test.group('Console watchers: jobs', () => {
  test('a dispatch joins the request batch; the execution and its logs form a batch of their own', async ({
    assert,
  }) => {
    const { url, manager } = await queueApp({ watchers: [watchers.jobs(), watchers.logs()] })
    const jobId = await dispatchedJobId(`${url}/invoices/7/send`)

    const [request] = await stored(manager, 'request')
    const jobs = await stored(manager, 'job')
    const [dispatch] = dispatches(jobs)
    assert.equal(dispatch.batchId, request.batchId)
    assert.equal(dispatch.summary, 'dispatch SendInvoice to default')
    assert.deepInclude(dispatch.content, {
      name: 'SendInvoice',
      jobIds: [jobId],
      queue: 'default',
      delayMs: null,
      dedupOutcome: null,
      error: null,
    })
    assert.deepEqual(dispatch.tags, ['dispatch'])

    const [execution] = executions(jobs)
    assert.equal(execution.batchId, execution.id)
    assert.notEqual(execution.batchId, request.batchId)
    assert.match(execution.summary, /^job SendInvoice completed \d+ ms$/)
    assert.deepInclude(execution.content, {
      name: 'SendInvoice',
      jobId,
      queue: 'default',
      attempt: 1,
      status: 'completed',
      error: null,
      stack: null,
      nextRetryAt: null,
    })
    assert.deepEqual(execution.tags, ['completed'])
    assert.isFalse(execution.slow)

    const batch = await manager.store.batch(execution.batchId)
    const log = batch.find((entry) => entry.type === 'log')
    assert.equal(log?.content.message, 'invoice 7 sent')

    // payloads are off by default: not even redacted
    assert.notProperty(dispatch.content, 'payloads')
    assert.notProperty(execution.content, 'payload')
    assert.notInclude(JSON.stringify(jobs), 'job-secret-7')
  })

  test('a failed execution keeps its error and stack even when job sampling drops the rest', async ({
    assert,
  }) => {
    const { url, manager } = await queueApp({
      watchers: [watchers.jobs()],
      sampling: { job: 0 },
    })
    await fetch(`${url}/invoices/9/charge`)
    const jobs = await stored(manager, 'job')

    const failed = executions(jobs).find((entry) => entry.content.status === 'failed')!
    assert.match(failed.summary, /^job ChargeCard failed \d+ ms: card declined for invoice 9$/)
    assert.equal(failed.content.error, 'card declined for invoice 9')
    assert.equal(failed.content.errorClass, 'CardDeclined')
    assert.match(failed.content.stack as string, /^Error: card declined for invoice 9\n\s+at /)
    assert.deepEqual(failed.tags, ['failed'])

    const retrying = executions(jobs).find((entry) => entry.content.status === 'retrying')!
    assert.equal(retrying.content.name, 'FlakyJob')
    assert.equal(retrying.content.attempt, 1)
    assert.equal(retrying.content.error, 'mail server busy')
    assert.isString(retrying.content.nextRetryAt)
    assert.isFalse(Number.isNaN(Date.parse(retrying.content.nextRetryAt as string)))
    assert.deepEqual(retrying.tags, ['retrying'])

    // the second attempt completed: with `sampling.job` at 0 it is not kept
    assert.equal(state.flakyRuns, 2)
    assert.lengthOf(executions(jobs), 2)
    // dispatches are part of the request's batch, sampled with it
    assert.deepEqual(
      dispatches(jobs).map((entry) => entry.content.name),
      ['ChargeCard', 'FlakyJob']
    )
  })

  test('a retried job completes on its next attempt, named in the summary', async ({ assert }) => {
    const { url, manager } = await queueApp({ watchers: [watchers.jobs()] })
    await fetch(`${url}/invoices/4/charge`)
    const flaky = executions(await stored(manager, 'job')).filter(
      (entry) => entry.content.name === 'FlakyJob'
    )
    assert.deepEqual(
      flaky.map((entry) => [entry.content.status, entry.content.attempt]),
      [
        ['retrying', 1],
        ['completed', 2],
      ]
    )
    assert.match(flaky[1].summary, /^job FlakyJob completed \d+ ms \(attempt 2\)$/)
    assert.notEqual(flaky[0].batchId, flaky[1].batchId)
  })

  test('payloads: true records payloads redacted', async ({ assert }) => {
    const { url, manager } = await queueApp({ watchers: [watchers.jobs({ payloads: true })] })
    await fetch(`${url}/invoices/7/send`)
    const jobs = await stored(manager, 'job')
    assert.deepEqual(dispatches(jobs)[0].content.payloads, [
      { invoiceId: 7, password: '[redacted]' },
    ])
    assert.deepEqual(executions(jobs)[0].content.payload, {
      invoiceId: 7,
      password: '[redacted]',
    })
    assert.notInclude(JSON.stringify(jobs), 'job-secret-7')
  })

  test('a job that runs for slowMs or longer is slow', async ({ assert }) => {
    const { url, manager } = await queueApp({ watchers: [watchers.jobs({ slowMs: 2 })] })
    await fetch(`${url}/reports`)
    const jobs = await stored(manager, 'job')
    const [execution] = executions(jobs)
    assert.isTrue(execution.slow)
    assert.deepEqual(execution.tags, ['completed', 'slow'])
    // under the sync adapter the dispatch waits for the run, so it is slow too
    assert.deepEqual(dispatches(jobs)[0].tags, ['dispatch', 'slow'])
  })

  test('a job on Redis is dispatched by a request and executed by a worker', async ({ assert }) => {
    const prefix = `atrium-jobs-${randomUUID()}::`
    createRedis(prefix)
    const { url, manager } = await queueApp({ watchers: [watchers.jobs()] }, prefix)
    const jobId = await dispatchedJobId(`${url}/invoices/3/later`)

    const worker = new Worker({
      default: 'redis',
      adapters: { redis: redisAdapter({ ...SERVICES.redis, keyPrefix: prefix }) },
      worker: { idleDelay: 10, gracefulShutdown: false },
    })
    try {
      let cycle = await worker.processCycle(['invoices'])
      while (cycle && cycle.type !== 'completed') cycle = await worker.processCycle(['invoices'])
    } finally {
      await worker.stop()
    }

    const [request] = await stored(manager, 'request')
    const jobs = await stored(manager, 'job')
    const [dispatch] = dispatches(jobs)
    assert.equal(dispatch.batchId, request.batchId)
    assert.equal(dispatch.summary, 'dispatch SendInvoice to invoices')
    assert.deepEqual(dispatch.content.jobIds, [jobId])
    const [execution] = executions(jobs)
    assert.equal(execution.content.jobId, jobId)
    assert.equal(execution.content.queue, 'invoices')
    assert.equal(execution.content.status, 'completed')
    assert.equal(execution.batchId, execution.id)
  })

  test('a failed dispatch outside any request is kept in a batch of its own', async ({
    assert,
  }) => {
    const { manager } = await queueApp({ watchers: [watchers.jobs()], sampling: { job: 0 } })
    await assert.rejects(() => Unregistered.dispatch({}).run(), 'Job class Unregistered not found.')
    const [dispatch] = await stored(manager, 'job')
    assert.equal(dispatch.batchId, dispatch.id)
    assert.equal(
      dispatch.summary,
      'dispatch Unregistered to default failed: Job class Unregistered not found.'
    )
    assert.equal(dispatch.content.error, 'Job class Unregistered not found.')
    assert.deepEqual(dispatch.tags, ['dispatch', 'failed'])
  })

  test('node ace queue:work records the jobs it runs and their logs; another command records nothing', async ({
    assert,
  }) => {
    const prefix = `atrium-jobs-${randomUUID()}::`
    createRedis(prefix)
    const adapter = () => redisAdapter({ ...SERVICES.redis, keyPrefix: prefix })
    /** Runs the worker until one job completes, as `queue:work` does until stopped */
    const work = async () => {
      const worker = new Worker({
        default: 'redis',
        adapters: { redis: adapter() },
        worker: { idleDelay: 10, gracefulShutdown: false },
      })
      try {
        let cycle = await worker.processCycle(['invoices'])
        while (cycle && cycle.type !== 'completed') cycle = await worker.processCycle(['invoices'])
      } finally {
        await worker.stop()
      }
    }
    class QueueWork extends BaseCommand {
      static commandName = 'queue:work'
      static options = { startApp: true }
      async run() {
        await work()
      }
    }
    class OtherCommand extends QueueWork {
      static commandName = 'invoices:drain'
    }
    const boot = async () => {
      const app = await consoleApp({
        environment: 'console',
        config: {
          watchers: [watchers.jobs(), watchers.logs()],
          buffer: { flushIntervalMs: 60_000 },
        },
        providers: [() => import('@adonisjs/queue/queue_provider')],
        appConfig: { queue: queueConfig({ default: 'redis', adapters: { redis: adapter() } }) },
      })
      state.logger = await app.app.container.make('logger')
      const ace = await app.app.container.make('ace')
      ace.addLoader(new ListLoader([QueueWork, OtherCommand]))
      ace.ui.switchMode('raw')
      return { ...app, ace }
    }

    const other = await boot()
    await SendInvoice.dispatch({ invoiceId: 4, password: 'job-secret-7' }).toQueue('invoices')
    await other.ace.handle(['invoices:drain'])
    assert.equal(other.ace.exitCode, 0)
    assert.lengthOf(await stored(other.manager, 'job'), 0)

    const worker = await boot()
    const { jobId } = await SendInvoice.dispatch({
      invoiceId: 5,
      password: 'job-secret-7',
    }).toQueue('invoices')
    await worker.ace.handle(['queue:work'])
    assert.equal(worker.ace.exitCode, 0)
    const [execution] = executions(await stored(worker.manager, 'job'))
    assert.equal(execution.content.jobId, jobId)
    assert.equal(execution.content.status, 'completed')
    const logs = await stored(worker.manager, 'log')
    assert.deepEqual(
      logs.filter((log) => log.batchId === execution.batchId).map((log) => log.content.message),
      ['invoice 5 sent']
    )
  })

  test('nothing is recorded without watchers.jobs()', async ({ assert }) => {
    const { url, manager } = await queueApp({ watchers: [] })
    await fetch(`${url}/invoices/9/charge`)
    assert.lengthOf(await stored(manager, 'job'), 0)
    assert.equal(state.flakyRuns, 2)
  })

  test('watchers.jobs() needs @adonisjs/queue, checked at boot', async ({ assert }) => {
    assert.deepEqual(watchers.jobs(), {
      name: 'jobs',
      package: '@adonisjs/queue',
      options: { slowMs: 1000, payloads: false },
    })
    assert.deepEqual(watchers.jobs({ slowMs: 50, payloads: true }).options, {
      slowMs: 50,
      payloads: true,
    })
    assert.throws(() => watchers.jobs({ slowMs: 1.5 }), /Invalid "watchers\.jobs\.slowMs"/)
    await assert.rejects(
      () =>
        consoleApp({
          config: {
            watchers: [{ ...watchers.jobs(), package: 'atrium-package-that-is-not-installed' }],
          },
        }),
      /watchers\.jobs\(\) in config\/console\.ts needs "atrium-package-that-is-not-installed", which is not installed\. Run: npm install atrium-package-that-is-not-installed/
    )
  })
})
