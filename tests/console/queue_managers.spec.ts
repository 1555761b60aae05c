import { test } from '@japa/runner'
import { consoleApp } from './helpers.ts'
import { watchers } from '../../src/console/main.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import type {
  ConsoleConfig,
  ConsoleJobListOptions,
  ConsoleQueueJob,
  ConsoleQueueManager,
  ConsoleScheduledTask,
} from '../../src/console/types.ts'

/**
 * An in-memory queue backend implementing both contracts: queues of jobs,
 * pages by offset cursors, and a record of every call it received.
 */
class MemoryQueues implements ConsoleQueueManager {
  driver = 'memory'
  inits = 0
  calls: string[] = []
  /** Jobs `listJobs` adds beyond the asked limit, as a careless backend might */
  extra = 0
  failInit = false
  jobs: Record<string, ConsoleQueueJob[]> = {
    emails: Array.from({ length: 7 }, (_, index) => ({
      id: `e${index}`,
      name: 'SendEmail',
      state: index < 2 ? 'failed' : 'waiting',
      attempts: index < 2 ? 3 : 0,
      createdAt: Date.UTC(2026, 0, 1, 0, index),
      payload: { to: `user${index}@example.com`, password: 'hunter2', note: 'x'.repeat(500) },
      error: index < 2 ? 'SMTP refused' : null,
    })),
    reports: [],
  }

  init() {
    this.inits++
    if (this.failInit) throw new Error('backend down')
  }
  listQueues() {
    return Object.keys(this.jobs)
  }
  counts(queue: string) {
    const counts: Record<string, number> = {}
    for (const job of this.jobs[queue]) counts[job.state] = (counts[job.state] ?? 0) + 1
    return counts
  }
  listJobs(queue: string, options: ConsoleJobListOptions) {
    this.calls.push(
      `list ${queue} ${options.state ?? '*'} ${options.limit} ${options.cursor ?? ''}`
    )
    const matching = this.jobs[queue].filter((job) => !options.state || job.state === options.state)
    const start = Number(options.cursor ?? 0)
    const end = start + options.limit
    return {
      jobs: matching.slice(start, end + this.extra),
      nextCursor: end < matching.length ? String(end) : null,
    }
  }
  getJob(queue: string, id: string) {
    return this.jobs[queue].find((job) => job.id === id) ?? null
  }
  retryJob(queue: string, id: string) {
    this.calls.push(`retry ${queue} ${id}`)
    this.getJob(queue, id)!.state = 'waiting'
  }
  listTasks(): ConsoleScheduledTask[] {
    return [
      {
        name: 'nightly-report',
        expression: '0 3 * * *',
        nextRunAt: new Date(Date.UTC(2026, 0, 2, 3)),
        lastRunAt: '2026-01-01T03:00:00.000Z',
        lastStatus: 'succeeded',
      },
    ]
  }
}

/** Mutations allowed to callers sending `x-admin: yes` */
async function queuesApp(config: ConsoleConfig = {}, queues = new MemoryQueues()) {
  const app = await consoleApp({
    config: {
      queueManagers: [queues],
      redact: { maxStringLength: 40 },
      authorizeAction: (ctx, action) =>
        ctx.request.header('x-admin') === 'yes' && action.name.endsWith('a job'),
      ...config,
    },
  })
  const json = async (path: string, init: RequestInit = {}) => {
    const response = await app.api(path, init)
    return { status: response.status, body: (await response.json()) as any }
  }
  return { ...app, queues, json }
}

test.group('Console | queue and schedule managers', () => {
  test('GET /queues lists each manager with its queues and their counts per state', async ({
    assert,
  }) => {
    const app = await queuesApp()
    const { status, body } = await app.json('/queues')
    assert.equal(status, 200)
    assert.deepEqual(body.data, [
      {
        driver: 'memory',
        error: null,
        queues: [
          { name: 'emails', counts: { failed: 2, waiting: 5 } },
          { name: 'reports', counts: {} },
        ],
      },
    ])
  })

  test('a job list is paged by the manager cursor and never longer than its bounded limit', async ({
    assert,
  }) => {
    const app = await queuesApp()
    const first = await app.json('/queues/memory/emails/jobs?state=waiting&limit=2')
    assert.deepEqual(
      first.body.data.map((job: any) => job.id),
      ['e2', 'e3']
    )
    assert.equal(first.body.nextCursor, '2')
    const second = await app.json(`/queues/memory/emails/jobs?state=waiting&limit=2&cursor=2`)
    assert.deepEqual(
      second.body.data.map((job: any) => job.id),
      ['e4', 'e5']
    )
    assert.include(app.queues.calls, 'list emails waiting 2 2')

    for (const limit of ['101', '0x10', '1e1', '%205']) {
      const refused = await app.json(`/queues/memory/emails/jobs?limit=${limit}`)
      assert.equal(refused.status, 400, limit)
      assert.equal(refused.body.errors[0].parameter, 'limit', limit)
    }
    const badState = await app.json('/queues/memory/emails/jobs?state=%3Cscript%3E')
    assert.equal(badState.status, 400)
    assert.equal(badState.body.errors[0].parameter, 'state')

    // a backend returning more than it was asked for is cut to the limit
    app.queues.extra = 3
    const careless = await app.json('/queues/memory/emails/jobs?limit=2')
    assert.lengthOf(careless.body.data, 2)
    const byDefault = await app.json('/queues/memory/emails/jobs')
    assert.include(app.queues.calls, 'list emails * 25 ')
    assert.lengthOf(byDefault.body.data, 7)
  })

  test('job payloads, errors and names leave the API redacted and bounded', async ({ assert }) => {
    const app = await queuesApp()
    app.queues.jobs.emails[0].name = 'N'.repeat(5000)
    const list = await app.json('/queues/memory/emails/jobs?state=failed')
    const detail = await app.json('/queues/memory/emails/jobs/e0')
    for (const job of [list.body.data[0], detail.body.data]) {
      assert.equal(job.id, 'e0')
      assert.equal(job.payload.password, '[redacted]')
      assert.equal(job.payload.to, 'user0@example.com')
      assert.isBelow(job.payload.note.length, 100)
      assert.isBelow(job.name.length, 300)
      assert.equal(job.error, 'SMTP refused')
      assert.equal(job.createdAt, Date.UTC(2026, 0, 1, 0, 0))
    }
  })

  test('unknown drivers, queues and jobs are 404s naming them', async ({ assert }) => {
    const app = await queuesApp()
    const driver = await app.json('/queues/bull/emails/jobs')
    assert.equal(driver.status, 404)
    assert.include(driver.body.errors[0].message, '"bull"')
    const queue = await app.json('/queues/memory/invoices/jobs')
    assert.equal(queue.status, 404)
    assert.include(queue.body.errors[0].message, '"invoices"')
    const job = await app.json('/queues/memory/emails/jobs/nope')
    assert.equal(job.status, 404)
    assert.include(job.body.errors[0].message, '"nope"')
    const retry = await app.json('/queues/memory/emails/jobs/nope/retry', {
      method: 'POST',
      headers: { 'x-admin': 'yes' },
    })
    assert.equal(retry.status, 404)
  })

  test('retry and remove are denied by default and when authorizeAction refuses or throws', async ({
    assert,
  }) => {
    const withoutHook = await queuesApp({ authorizeAction: undefined })
    const denied = await withoutHook.json('/queues/memory/emails/jobs/e0/retry', {
      method: 'POST',
      headers: { 'x-admin': 'yes' },
    })
    assert.equal(denied.status, 403)
    assert.equal(denied.body.errors[0].code, 'E_CONSOLE_FORBIDDEN')

    const app = await queuesApp()
    const refused = await app.json('/queues/memory/emails/jobs/e0/retry', { method: 'POST' })
    assert.equal(refused.status, 403)
    const removeRefused = await app.json('/queues/memory/emails/jobs/e0', { method: 'DELETE' })
    assert.equal(removeRefused.status, 403)

    const throwing = await queuesApp({
      authorizeAction: () => {
        throw new Error('policy store down')
      },
    })
    const thrown = await throwing.json('/queues/memory/emails/jobs/e0/retry', { method: 'POST' })
    assert.equal(thrown.status, 403)
    for (const each of [withoutHook, app, throwing]) {
      assert.notInclude(each.queues.calls.join(','), 'retry')
      assert.equal(each.queues.jobs.emails[0].state, 'failed')
    }
  })

  test('an allowed retry reaches the manager; a remove it does not implement is a 501', async ({
    assert,
  }) => {
    const app = await queuesApp()
    const retried = await app.json('/queues/memory/emails/jobs/e0/retry', {
      method: 'POST',
      headers: { 'x-admin': 'yes' },
    })
    assert.equal(retried.status, 200)
    assert.deepEqual(retried.body.data, {
      driver: 'memory',
      queue: 'emails',
      id: 'e0',
      action: 'retried',
    })
    assert.include(app.queues.calls, 'retry emails e0')
    assert.equal(app.queues.jobs.emails[0].state, 'waiting')

    const removed = await app.json('/queues/memory/emails/jobs/e1', {
      method: 'DELETE',
      headers: { 'x-admin': 'yes' },
    })
    assert.equal(removed.status, 501)
    assert.equal(removed.body.errors[0].code, 'E_CONSOLE_QUEUE_ACTION_UNSUPPORTED')
    assert.include(removed.body.errors[0].message, 'removeJob')
    assert.lengthOf(app.queues.jobs.emails, 7)
  })

  test('one object in queueManagers, scheduleManagers and watchers is listed and initialised once', async ({
    assert,
  }) => {
    const shared = new MemoryQueues()
    const app = await queuesApp({
      queueManagers: [shared, shared],
      scheduleManagers: [shared],
      watchers: [watchers.http(), shared],
    })
    const queues = await app.json('/queues')
    await app.json('/queues/memory/emails/jobs')
    const schedules = await app.json('/schedules')
    assert.lengthOf(queues.body.data, 1)
    assert.deepEqual(schedules.body.data, [
      {
        driver: 'memory',
        error: null,
        tasks: [
          {
            name: 'nightly-report',
            expression: '0 3 * * *',
            nextRunAt: Date.UTC(2026, 0, 2, 3),
            lastRunAt: Date.UTC(2026, 0, 1, 3),
            lastStatus: 'succeeded',
          },
        ],
      },
    ])
    assert.equal(shared.inits, 1)
    // the descriptor stays a watcher; the manager is not mistaken for one
    assert.deepEqual(
      app.manager.config.watchers.map((watcher) => watcher.name),
      ['http']
    )
  })

  test('a manager whose init fails is reported, answers 503, and is tried again', async ({
    assert,
  }) => {
    const failing = new MemoryQueues()
    failing.failInit = true
    const app = await queuesApp({}, failing)
    const listed = await app.json('/queues')
    assert.equal(listed.body.data[0].error, 'Manager "memory" is unavailable: backend down')
    const jobs = await app.json('/queues/memory/emails/jobs')
    assert.equal(jobs.status, 503)
    assert.equal(jobs.body.errors[0].code, 'E_CONSOLE_MANAGER_UNAVAILABLE')
    assert.isTrue(app.warnings.some((line) => line.includes('backend down')))

    failing.failInit = false
    const recovered = await app.json('/queues/memory/emails/jobs')
    assert.equal(recovered.status, 200)
    const inits = failing.inits
    assert.isAtLeast(inits, 2)
    await app.json('/queues')
    assert.equal(failing.inits, inits)
  })

  test('an item lacking the contract fails at boot naming the option and the missing methods', ({
    assert,
  }) => {
    assert.throws(
      () =>
        resolveConsoleConfig({
          queueManagers: [{ driver: 'bull', init() {}, listQueues: () => [] } as any],
        }),
      /Invalid "queueManagers\[0\]" in config\/console\.ts: a queue manager needs "counts", "listJobs", "getJob"/
    )
    assert.throws(
      () => resolveConsoleConfig({ scheduleManagers: [{ driver: 'cron' } as any] }),
      /Invalid "scheduleManagers\[0\]".*"listTasks"/
    )
    const other = Object.assign(new MemoryQueues(), {})
    assert.throws(
      () => resolveConsoleConfig({ queueManagers: [new MemoryQueues(), other] }),
      /Two queue managers in config\/console\.ts are named "memory"/
    )
    assert.throws(
      () => resolveConsoleConfig({ queueManagers: {} as any }),
      /Invalid "queueManagers" in config\/console\.ts: use a list/
    )
  })
})
