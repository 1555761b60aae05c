import { test } from '@japa/runner'
import { ExceptionHandler } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { defineConfig as transmitConfig } from '@adonisjs/transmit'
import { chromium } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import { SECRET } from './helpers.ts'

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
async function liveDashboardApp() {
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
        overloadProtection: false,
      }),
    },
    routes: (router) => {
      router.get('/invoices/:id', async () => ({ ok: true }))
    },
  })
  const manager = await app.app.container.make('atrium.console')
  return { ...app, flush: () => manager.recorder.flush() }
}

test.group('Console dashboard: live tail in a real browser', () => {
  test('a followed list shows a request made after it opened, without a reload', async ({
    assert,
    cleanup,
  }) => {
    const { url, flush } = await liveDashboardApp()
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
    cleanup(() => browser.close())
    const tab = await browser.newPage()
    const problems: string[] = []
    tab.on('pageerror', (error) => problems.push(error.message))
    tab.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) problems.push(message.text())
    })

    await tab.goto(`${url}/console#/requests`)
    await tab.locator('input[name="username"]').fill('ada')
    await tab.locator('input[name="password"]').fill('lovelace')
    await tab.getByRole('button', { name: 'Sign in' }).click()
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
})
