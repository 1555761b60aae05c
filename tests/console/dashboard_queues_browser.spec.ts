import { getActiveTest, test } from '@japa/runner'
import { ExceptionHandler } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { chromium } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import { SECRET } from './helpers.ts'
import type {
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
 * is in the database-free suite) whose one operator may retry jobs.
 */
async function queuesDashboard() {
  const queues = new InvoiceQueues()
  const app = await setupApp({
    providers: [
      () => import('../../providers/console_provider.ts'),
      async () => ({ default: ExceptionHandlerProvider }),
    ],
    config: {
      console: defineConfig({
        storage: stores.memory(),
        watchers: [queues],
        dashboardAuth: {
          secret: SECRET,
          login: (username, password) =>
            username === 'ada' && password === 'lovelace' ? { id: '1', name: 'Ada' } : null,
        },
        authorizeAction: (_ctx, action) => action.name === 'retry a job',
        overloadProtection: false,
      }),
    },
  })
  return { ...app, queues }
}

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
})
