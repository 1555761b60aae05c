import { getActiveTest, test } from '@japa/runner'
import { EventEmitter } from 'node:events'
import { ExceptionHandler } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { chromium, type Browser } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig, defineConsoleExtension, stores } from '../../src/console/main.ts'

class ExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}
  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => ({ default: class extends ExceptionHandler {} }))
  }
}

/** A console on the memory store (no database: the spec is in the database-free suite) with one extension */
async function extensionApp() {
  const events = new EventEmitter()
  const shop = defineConsoleExtension({
    name: 'shop',
    entryTypes: ['order'],
    watchers: [
      {
        name: 'orders',
        install({ record }) {
          const placed = (id: string) => record({ type: 'order', summary: `order ${id} placed` })
          events.on('placed', placed)
          return () => events.off('placed', placed)
        },
      },
    ],
    dataProviders: {
      revenue: () => [
        { currency: 'EUR', total: 1250 },
        { currency: 'BRL', total: 90, refunds: { count: 1 } },
      ],
      summary: () => ({ orders: 3, open: true }),
      broken: () => {
        throw new Error('no warehouse')
      },
    },
    pages: [
      { title: 'Revenue by currency', provider: 'revenue' },
      { title: 'Order summary', provider: 'summary' },
      { title: 'Stock', provider: 'broken' },
    ],
  })
  const app = await setupApp({
    providers: [
      () => import('../../providers/console_provider.ts'),
      async () => ({ default: ExceptionHandlerProvider }),
    ],
    config: {
      console: defineConfig({
        storage: stores.memory(),
        extensions: [shop],
        buffer: { flushIntervalMs: 60_000 },
        overloadProtection: false,
      }),
    },
    routes: (router) => {
      router.get('/checkout/:id', (ctx) => {
        events.emit('placed', ctx.params.id)
        return { ok: true }
      })
    },
  })
  const manager = await app.app.container.make('atrium.console')
  return { ...app, flush: () => manager.recorder.flush() }
}

test.group('Console dashboard: Extensions screen in a real browser', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
    return () => browser.close()
  })
  group.each.timeout(120_000)

  test("lists the extension's pages and types, and renders provider JSON as tables", async ({
    assert,
  }) => {
    const { url, flush } = await extensionApp()
    assert.equal(await fetch(`${url}/checkout/A-17`).then((response) => response.status), 200)
    await flush()

    const context = await browser.newContext()
    getActiveTest()!.cleanup(() => context.close())
    const tab = await context.newPage()
    const pageErrors: string[] = []
    tab.on('pageerror', (error) => pageErrors.push(error.message))
    await tab.goto(`${url}/console`)
    await tab.getByRole('link', { name: 'Extensions' }).click()

    // an array of objects: one column per key, nested values as JSON
    await tab.getByRole('link', { name: 'Revenue by currency' }).click()
    await tab.getByRole('heading', { name: 'Revenue by currency' }).waitFor()
    assert.deepEqual(await tab.locator('table.entries th').allTextContents(), [
      'currency',
      'total',
      'refunds',
    ])
    assert.deepEqual(
      await tab.locator('table.entries tbody tr').nth(1).locator('td').allTextContents(),
      ['BRL', '90', '{"count":1}']
    )

    // an object: key-value rows
    await tab.goBack()
    await tab.getByRole('link', { name: 'Order summary' }).click()
    await tab.locator('table.kv').waitFor()
    assert.deepEqual(await tab.locator('table.kv th').allTextContents(), ['orders', 'open'])
    assert.deepEqual(await tab.locator('table.kv td').allTextContents(), ['3', 'true'])

    // a failing provider: the API's message, not the error's
    await tab.goBack()
    await tab.getByRole('link', { name: 'Stock' }).click()
    const alert = tab.getByRole('alert')
    await alert.waitFor()
    assert.equal(await alert.textContent(), 'Data provider "broken" of extension "shop" failed')

    // the custom type's entries
    await tab.goBack()
    await tab.getByRole('link', { name: 'order entries' }).click()
    await tab.getByRole('link', { name: 'order A-17 placed' }).waitFor()
    assert.match(tab.url(), /#\/extensions\/shop\/entries\/order$/)
    assert.deepEqual(pageErrors, [])
  })
})
