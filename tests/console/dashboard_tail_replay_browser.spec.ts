import { getActiveTest, test } from '@japa/runner'
import { defineConfig as bodyParserConfig } from '@adonisjs/core/bodyparser'
import { BodyParserMiddleware } from '@adonisjs/bodyparser/bodyparser_middleware'
import { ExceptionHandler } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { defineConfig as transmitConfig } from '@adonisjs/transmit'
import { chromium } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import { SECRET } from './helpers.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'

class ExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}
  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => ({ default: class extends ExceptionHandler {} }))
  }
}

/**
 * A console in login mode on the memory store, with `@adonisjs/transmit`
 * registered: no database service, so the spec is in the database-free suite.
 */
async function liveDashboardApp(config: ConsoleConfig = {}) {
  const app = await setupApp({
    providers: [
      () => import('@adonisjs/transmit/transmit_provider'),
      () => import('../../providers/console_provider.ts'),
      async () => ({ default: ExceptionHandlerProvider }),
    ],
    config: {
      transmit: transmitConfig({ pingInterval: false, transport: null }),
      console: defineConfig({
        storage: stores.memory(),
        dashboardAuth: {
          secret: SECRET,
          login: (username, password) =>
            username === 'ada' && password === 'lovelace' ? { id: '1', name: 'Ada' } : null,
        },
        // entries reach the tail when flushed: the test flushes, the timer never does
        buffer: { flushIntervalMs: 60_000 },
        authorizeAction: (ctx, action) =>
          action.name === 'replay a request' && ctx.consoleSession?.sub === '1',
        overloadProtection: false,
        ...config,
      }),
    },
    routes: (router) => {
      // the bodyparser as start/kernel.ts registers it: the request watcher records parsed bodies
      router.use([
        async () => ({
          default: class extends BodyParserMiddleware {
            constructor() {
              super(bodyParserConfig({}) as any)
            }
          },
        }),
      ])
      router.get('/invoices/:id', async () => ({ ok: true }))
      router.post('/refunds', async (ctx) =>
        ctx.response.created({ refunded: ctx.request.input('id') })
      )
    },
  })
  const manager = await app.app.container.make('atrium.console')
  return { ...app, flush: () => manager.recorder.flush() }
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
  tab.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) problems.push(message.text())
  })
  await tab.goto(`${url}/console#${hash}`)
  await tab.locator('input[name="username"]').fill('ada')
  await tab.locator('input[name="password"]').fill('lovelace')
  await tab.getByRole('button', { name: 'Sign in' }).click()
  return { tab, problems }
}

test.group('Console dashboard: live tail, replay and trace links in a real browser', () => {
  test('a recorded request copies as cURL and replays into a new batch', async ({ assert }) => {
    const { url, flush } = await liveDashboardApp()
    const answer = await fetch(`${url}/refunds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'authorization': 'Bearer s3cret' },
      body: JSON.stringify({ id: 'rf_77' }),
    })
    assert.equal(answer.status, 201)
    await flush()
    const { tab, problems } = await signedInTab(url, '/requests')
    await tab.getByRole('link', { name: 'POST /refunds' }).click()

    await tab.getByRole('button', { name: 'Copy as cURL' }).click()
    const command = await tab.locator('pre.curl').textContent()
    assert.include(command, `'${url}/refunds'`)
    assert.include(command, `--data-raw '{"id":"rf_77"}'`)
    assert.notInclude(command, 's3cret')
    await tab.getByText('redacted headers left out: authorization').first().waitFor()

    await tab.getByRole('button', { name: 'Replay' }).click()
    await tab.getByText('Replayed: answered 201').waitFor()
    await tab.getByRole('link', { name: 'its batch' }).click()
    await tab.getByText('POST /refunds').first().waitFor()
    assert.deepEqual(problems, [])
  }).timeout(60_000)

  test('a followed list shows a request made after it opened, without a reload', async ({
    assert,
  }) => {
    const { url, flush } = await liveDashboardApp()
    const { tab, problems } = await signedInTab(url, '/requests')
    await tab.getByRole('button', { name: 'Live tail' }).click()
    await tab.getByText('Live: new entries appear at the top').waitFor()

    assert.equal(await fetch(`${url}/invoices/9031`).then((response) => response.status), 200)
    await flush()
    const row = tab.locator('table.entries tbody tr', { hasText: 'GET /invoices/9031' })
    await row.waitFor()
    assert.equal(await row.locator('td').nth(2).textContent(), '200')

    await tab.getByRole('button', { name: 'Stop live tail' }).click()
    assert.deepEqual(problems, [])
  }).timeout(60_000)

  test('a traced request links its entry and its batch to the tracing backend', async ({
    assert,
  }) => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const { url, flush } = await liveDashboardApp({
      traceContext: true,
      traceLink: 'https://tempo.example.com/trace/{traceId}',
    })
    const answer = await fetch(`${url}/invoices/77`, {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    })
    assert.equal(answer.status, 200)
    await flush()
    const { tab, problems } = await signedInTab(url, '/requests')
    await tab.getByRole('link', { name: 'GET /invoices/77' }).click()

    const link = tab.getByRole('link', { name: `trace ${traceId}` })
    await link.waitFor()
    assert.equal(await link.getAttribute('href'), `https://tempo.example.com/trace/${traceId}`)
    await tab.getByRole('link', { name: 'Batch timeline' }).click()
    await tab.locator('table.timeline').waitFor()
    assert.equal(
      await tab.getByRole('link', { name: `trace ${traceId}` }).getAttribute('href'),
      `https://tempo.example.com/trace/${traceId}`
    )
    assert.deepEqual(problems, [])
  }).timeout(60_000)
})
