import { getActiveTest, test } from '@japa/runner'
import { ExceptionHandler } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { chromium } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig, stores, traceScheduledTask, watchers } from '../../src/console/main.ts'
import { SECRET } from './helpers.ts'
import type {
  ConsoleConfig,
  ConsoleJobListOptions,
  ConsoleQueueJob,
  ConsoleQueueManager,
} from '../../src/console/types.ts'

class ExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}
  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => ({ default: class extends ExceptionHandler {} }))
  }
}

/** Two failed jobs and a waiting one; retry implemented, remove not */
class InvoiceQueues implements ConsoleQueueManager {
  driver = 'billing'
  jobs: ConsoleQueueJob[] = [
    { id: 'j1', name: 'ChargeCard', state: 'failed', attempts: 3, payload: { cvv: '123' } },
    { id: 'j2', name: 'ChargeCard', state: 'failed', attempts: 1, payload: { amount: 990 } },
    { id: 'j3', name: 'SendReceipt', state: 'waiting', attempts: 0, payload: {} },
  ]
  init() {}
  listQueues() {
    return ['invoices']
  }
  counts() {
    const counts: Record<string, number> = {}
    for (const job of this.jobs) counts[job.state] = (counts[job.state] ?? 0) + 1
    return counts
  }
  listJobs(_queue: string, options: ConsoleJobListOptions) {
    return { jobs: this.jobs.filter((job) => !options.state || job.state === options.state) }
  }
  getJob(_queue: string, id: string) {
    return this.jobs.find((job) => job.id === id) ?? null
  }
  retryJob(_queue: string, id: string) {
    this.getJob('invoices', id)!.state = 'waiting'
  }
  listTasks() {
    return [{ name: 'close-books', expression: '0 0 1 * *', lastStatus: 'failed' }]
  }
}

/**
 * A console in login mode on the memory store (no database service: the spec
 * is in the database-free suite), with Ada as its one operator.
 */
async function loginDashboard(
  options: Pick<ConsoleConfig, 'watchers' | 'authorizeAction' | 'buffer'>
) {
  return setupApp({
    providers: [
      () => import('../../providers/console_provider.ts'),
      async () => ({ default: ExceptionHandlerProvider }),
    ],
    config: {
      console: defineConfig({
        storage: stores.memory(),
        ...options,
        dashboardAuth: {
          secret: SECRET,
          login: (username, password) =>
            username === 'ada' && password === 'lovelace' ? { id: '1', name: 'Ada' } : null,
        },
        overloadProtection: false,
      }),
    },
  })
}

/** A console of the invoice queues whose operator may retry jobs */
async function queuesDashboard() {
  const queues = new InvoiceQueues()
  const app = await loginDashboard({
    watchers: [queues],
    authorizeAction: (_ctx, action) => action.name === 'retry a job',
  })
  return { ...app, queues }
}

/** A console recording scheduled task runs and their log lines */
async function scheduleRunsDashboard() {
  const app = await loginDashboard({
    watchers: [watchers.schedules(), watchers.logs()],
    buffer: { flushIntervalMs: 60_000 },
  })
  const manager = await app.app.container.make('atrium.console')
  const logger = await app.app.container.make('logger')
  return { ...app, manager, logger }
}

class LedgerLocked extends Error {}

async function signedInTab(url: string, hash: string) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  getActiveTest()!.cleanup(() => browser.close())
  const tab = await browser.newPage()
  const problems: string[] = []
  tab.on('pageerror', (error) => problems.push(error.message))
  await tab.goto(`${url}/console#${hash}`)
  await tab.locator('input[name="username"]').fill('ada')
  await tab.locator('input[name="password"]').fill('lovelace')
  await tab.getByRole('button', { name: 'Sign in' }).click()
  return { tab, problems }
}

test.group('Console dashboard: queues and schedules in a real browser', () => {
  test('a queue state opens its jobs; retry is applied, a refused remove shows why', async ({
    assert,
  }) => {
    const { url, queues } = await queuesDashboard()
    const { tab, problems } = await signedInTab(url, '/queues')
    await tab.getByRole('link', { name: 'failed 2' }).click()

    const rows = tab.locator('table.entries tbody tr')
    await rows.nth(1).waitFor()
    assert.equal(await rows.count(), 2)
    await rows.first().getByText('Payload').click()
    assert.include(await rows.first().locator('pre').textContent(), '"cvv": "[redacted]"')

    await rows.first().getByRole('button', { name: 'Retry' }).click()
    await tab.getByText('Retried job j1').waitFor()
    assert.equal(queues.jobs[0].state, 'waiting')
    // the list reloads: only j2 is still failed
    await tab.locator('table.entries tbody tr', { hasText: 'j1' }).waitFor({ state: 'detached' })

    await tab.getByRole('button', { name: 'Remove' }).click()
    await tab.getByText('Not allowed to remove a job').waitFor()
    assert.lengthOf(queues.jobs, 3)

    await tab.getByRole('link', { name: 'Schedules' }).click()
    const task = tab.locator('table.entries tbody tr', { hasText: 'close-books' })
    await task.waitFor()
    assert.include(await task.textContent(), '0 0 1 * *')
    assert.include(await task.textContent(), 'failed')
    assert.deepEqual(problems, [])
  }).timeout(60_000)

  test('Scheduled runs lists task runs newest first; the failed tag narrows it; a run shows its task, error, stack and batch', async ({
    assert,
  }) => {
    const { url, manager, logger } = await scheduleRunsDashboard()
    await traceScheduledTask(
      { name: 'reports:send', expression: '0 8 * * *', scheduler: 'adonisjs-scheduler' },
      async () => logger.info('sent 3 reports')
    )
    const failing = traceScheduledTask({ name: 'ledger:sync', expression: 'every 5m' }, () => {
      throw new LedgerLocked('ledger locked by <b>books:close</b>')
    })
    await assert.rejects(() => failing, 'ledger locked by <b>books:close</b>')
    await manager.recorder.flush()

    const { tab, problems } = await signedInTab(url, '/requests')
    await tab.getByRole('link', { name: 'Scheduled runs' }).click()
    const rows = tab.locator('table.entries tbody tr')
    await rows.nth(1).waitFor()
    const summaries = await tab.locator('table.entries td.summary').allTextContents()
    assert.lengthOf(summaries, 2)
    assert.match(
      summaries[0],
      /^task ledger:sync failed \d+ ms: ledger locked by <b>books:close<\/b>$/
    )
    assert.match(summaries[1], /^task reports:send succeeded \d+ ms$/)
    assert.deepEqual(
      await Promise.all([0, 1].map((index) => rows.nth(index).locator('.tag').allTextContents())),
      [['failed'], ['succeeded']]
    )
    // the error message is text, never markup
    assert.equal(await tab.locator('main b').count(), 0)

    await tab.locator('.filters input[name="tag"]').fill('failed')
    await tab.getByRole('button', { name: 'Apply' }).click()
    await tab.waitForFunction(
      () => (globalThis as any).location.hash === '#/schedule-runs?tag=failed'
    )
    await tab.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('table.entries tbody tr').length === 1
    )
    await tab.getByRole('link', { name: /^task ledger:sync failed/ }).click()
    await tab.locator('dl.fields').waitFor()
    const fields = await tab.locator('dl.fields dd').allTextContents()
    assert.deepEqual(
      [fields[0], fields[1], fields[2], fields[4], fields[6]],
      ['ledger:sync', 'every 5m', '', 'failed', 'ledger locked by <b>books:close</b>']
    )
    assert.isAtMost(Date.parse(fields[3]), Date.now())
    const stack = await tab.locator('main pre').first().textContent()
    assert.include(stack, 'ledger locked by <b>books:close</b>')
    assert.include(stack, 'dashboard_queues_browser.spec.ts')

    // the successful run's batch holds the line its task logged
    await tab.goBack()
    await tab.goBack()
    await tab.getByRole('link', { name: /^task reports:send succeeded/ }).click()
    await tab.locator('dl.fields').waitFor()
    const succeeded = await tab.locator('dl.fields dd').allTextContents()
    assert.deepEqual(succeeded.slice(0, 3), ['reports:send', '0 8 * * *', 'adonisjs-scheduler'])
    await tab.getByRole('link', { name: 'Batch timeline' }).click()
    await tab.locator('table.timeline tbody tr').nth(1).waitFor()
    assert.deepEqual(
      await tab
        .locator('table.timeline tbody tr')
        .evaluateAll((elements) => elements.map((row) => (row as any).dataset.type)),
      ['schedule', 'log']
    )
    assert.deepEqual(await tab.locator('table.timeline td.summary a').allTextContents(), [
      await tab.locator('table.timeline td.summary a').first().textContent(),
      'info: sent 3 reports',
    ])
    assert.match(
      (await tab.locator('table.timeline td.summary a').first().textContent())!,
      /^task reports:send succeeded/
    )
    assert.equal(await tab.locator('main b').count(), 0)
    assert.deepEqual(problems, [])
  }).timeout(60_000)
})
