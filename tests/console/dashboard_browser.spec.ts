import { getActiveTest, test } from '@japa/runner'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { ExceptionHandler, type Router } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { chromium, type Browser, type Page } from 'playwright-core'
import { setupApp } from '../helpers.ts'
import { defineConfig, defineConsoleExtension, stores, watchers } from '../../src/console/main.ts'
import { entryId } from '../../src/console/ids.ts'
import type { ConsoleConfig } from '../../src/console/types.ts'
import { SECRET } from './helpers.ts'

class ExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}
  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => ({ default: class extends ExceptionHandler {} }))
  }
}

const login = (username: string, password: string) =>
  username === 'ada' && password === 'lovelace' ? { id: '1', name: 'Ada' } : null

/** CPU work the flame graph must show by name */
function crunchNumbersForTheFlameGraph(ms: number) {
  const until = Date.now() + ms
  let spins = 0
  while (Date.now() < until) spins++
  return spins
}

/** Host routes: one running a query twice and logging a line, one emitting an event, plain ones, a failing one, one logging markup, one burning CPU */
function hostRoutes(router: Router) {
  router.get('/crunch', async () => ({ spins: crunchNumbersForTheFlameGraph(150) }))
  router.get('/orders/:id', async (ctx) => {
    const db = await ctx.containerResolver.make('lucid.db')
    await db.rawQuery('select ? as shipment_marker', [ctx.params.id])
    await db.rawQuery('select ? as shipment_marker', [ctx.params.id])
    ctx.logger.info('order %s shipped to Lisbon', ctx.params.id)
    return { ok: true }
  })
  router.get('/checkout/:id', async (ctx) => {
    const emitter = await ctx.containerResolver.make('emitter')
    await emitter.emit('order:placed' as any, {
      orderId: Number(ctx.params.id),
      password: 'browser-secret',
    })
    return { ok: true }
  })
  router.get('/ping', async () => 'pong')
  router.post('/ping', async () => 'pong')
  router.get('/boom/:id', async (ctx) => {
    throw new Error(`kaboom ${ctx.params.id}`)
  })
  router.get('/hostile', async (ctx) => {
    ctx.logger.info('<img src=x onerror="window.__pwned=1"> sneaky')
    return 'ok'
  })
}

/**
 * A console in login mode on the memory store, with an in-memory SQLite of
 * its own for the host's queries: no database service, so the spec is in the
 * database-free suite.
 */
async function dashboardApp(config: ConsoleConfig = {}) {
  const app = await setupApp({
    providers: [
      () => import('@adonisjs/lucid/database_provider'),
      () => import('../../providers/console_provider.ts'),
      async () => ({ default: ExceptionHandlerProvider }),
    ],
    config: {
      database: {
        connection: 'memory',
        connections: {
          memory: {
            client: 'better-sqlite3',
            connection: { filename: ':memory:' },
            useNullAsDefault: true,
          },
        },
      },
      console: defineConfig({
        storage: stores.memory(),
        watchers: [watchers.queries(), watchers.logs()],
        dashboardAuth: { secret: SECRET, login },
        buffer: { flushIntervalMs: 60_000 },
        overloadProtection: false,
        ...config,
      }),
    },
    routes: hostRoutes,
  })
  const manager = await app.app.container.make('atrium.console')
  return { ...app, manager, flush: () => manager.recorder.flush() }
}

/** The asset URLs the shell links */
function linkedAssets(html: string) {
  return [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1])
}

test.group('Console dashboard: shell and assets', () => {
  test('the shell links hashed assets, holds no data and no inline script', async ({ assert }) => {
    const { url } = await dashboardApp()
    await fetch(`${url}/orders/7`)
    const response = await fetch(`${url}/console`)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8')
    assert.equal(response.headers.get('cache-control'), 'no-store')
    assert.include(response.headers.get('content-security-policy')!, "script-src 'self'")
    const html = await response.text()
    const assets = linkedAssets(html)
    assert.lengthOf(assets, 2)
    assert.match(
      assets.find((path) => path.endsWith('.js'))!,
      /^\/console\/assets\/console-\w+\.js$/
    )
    assert.match(
      assets.find((path) => path.endsWith('.css'))!,
      /^\/console\/assets\/console-\w+\.css$/
    )
    assert.include(html, 'content="/console/api"')
    assert.notMatch(html, /<script(?![^>]*\ssrc=)/)
    assert.notMatch(html, /<style/)
    assert.notInclude(html, 'orders')
  })

  test('assets are served immutable with their content type; any other name is a 404', async ({
    assert,
  }) => {
    const { url } = await dashboardApp()
    const html = await fetch(`${url}/console`).then((response) => response.text())
    for (const path of linkedAssets(html)) {
      const response = await fetch(`${url}${path}`)
      assert.equal(response.status, 200)
      assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable')
      assert.equal(
        response.headers.get('content-type'),
        path.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8'
      )
      const body = await response.arrayBuffer()
      assert.isAbove(body.byteLength, 100)
    }
    for (const name of [
      'console-AAAAAAAA.js',
      'manifest.json',
      '..%2F..%2Fpackage.json',
      '..%2Fmanifest.json',
      '%2Fetc%2Fpasswd',
    ]) {
      const response = await fetch(`${url}/console/assets/${name}`)
      assert.equal(response.status, 404, name)
      assert.notInclude(await response.text(), 'adonis-atrium')
    }
  })

  test('ui.middleware fronts the assets as well as the shell', async ({ assert }) => {
    const hostGuard = async (ctx: HttpContext, next: NextFn) => {
      if (ctx.request.header('cookie')?.includes('host_session=ok')) return next()
      return ctx.response.unauthorized({ message: 'host says no' })
    }
    const { url } = await dashboardApp({ ui: { middleware: [hostGuard] } })
    const cookie = { headers: { cookie: 'host_session=ok' } }
    const html = await fetch(`${url}/console`, cookie).then((response) => response.text())
    const [script] = linkedAssets(html)
    assert.equal(await fetch(`${url}/console`).then((response) => response.status), 401)
    assert.equal(await fetch(`${url}${script}`).then((response) => response.status), 401)
    assert.equal(await fetch(`${url}${script}`, cookie).then((response) => response.status), 200)
  })
})

test.group('Console dashboard in a real browser', (group) => {
  let browser: Browser
  group.setup(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
    return () => browser.close()
  })
  group.each.timeout(120_000)

  /** A tab in its own context, closed when the test ends (before the app stops); CSP reports kept */
  async function open(url: string) {
    const context = await browser.newContext()
    getActiveTest()!.cleanup(() => context.close())
    const tab = await context.newPage()
    const policyViolations: string[] = []
    const pageErrors: string[] = []
    tab.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) policyViolations.push(message.text())
    })
    tab.on('pageerror', (error) => pageErrors.push(error.message))
    await tab.goto(`${url}/console`)
    return { context, tab, policyViolations, pageErrors }
  }

  async function signIn(tab: Page, password: string) {
    await tab.locator('input[name="username"]').fill('ada')
    await tab.locator('input[name="password"]').fill(password)
    await tab.getByRole('button', { name: 'Sign in' }).click()
  }

  const texts = (tab: Page, selector: string) => tab.locator(selector).allTextContents()

  test('sign in, follow a request to its batch, search a log line, read the health view', async ({
    assert,
  }) => {
    const { url, flush } = await dashboardApp()
    for (const id of ['41', '42']) {
      assert.equal(await fetch(`${url}/orders/${id}`).then((response) => response.status), 200)
    }
    await flush()
    const { tab, policyViolations, pageErrors } = await open(url)

    // the auth screen offers the login form only, and shows a refused login
    await tab.locator('form.login').waitFor()
    assert.equal(await tab.getByRole('button', { name: 'Continue with my account' }).count(), 0)
    await signIn(tab, 'wrong')
    await tab.getByRole('alert').getByText('Invalid credentials').waitFor()
    await signIn(tab, 'lovelace')

    // requests list, newest first, then the entry
    await tab.getByRole('link', { name: 'GET /orders/42' }).waitFor()
    assert.deepEqual(await texts(tab, 'table.entries td.summary'), [
      'GET /orders/42',
      'GET /orders/41',
    ])
    await tab.getByRole('link', { name: 'GET /orders/42' }).click()
    await tab.locator('dl.fields').waitFor()
    assert.deepEqual(await texts(tab, 'dl.fields dd'), [
      'GET',
      '/orders/42',
      '/orders/:id',
      '200',
      await tab.locator('dl.fields dd').nth(4).textContent(),
      '127.0.0.1',
      '',
    ])
    assert.match(tab.url(), /#\/entries\/\w+$/)

    // its batch: the request, the query it ran twice, the line it logged, in order, with bars
    await tab.getByRole('link', { name: 'Batch timeline' }).click()
    await tab.locator('table.timeline tbody tr').nth(3).waitFor()
    const rows = tab.locator('table.timeline tbody tr')
    assert.deepEqual(
      await rows.evaluateAll((elements) => elements.map((row) => (row as any).dataset.type)),
      ['request', 'query', 'query', 'log']
    )
    assert.deepEqual(await texts(tab, 'table.timeline td.summary a'), [
      'GET /orders/42',
      'select ? as shipment_marker',
      'select ? as shipment_marker',
      'info: order 42 shipped to Lisbon',
    ])
    assert.equal(await tab.locator('table.timeline .bar').count(), 4)
    assert.deepEqual(await texts(tab, 'main .tag.warn'), [
      '2 duplicated queries',
      '×2 duplicate',
      '×2 duplicate',
    ])

    // search by a word of the log message
    await tab.getByRole('searchbox', { name: 'Search entries' }).fill('lisbon')
    await tab.getByRole('searchbox', { name: 'Search entries' }).press('Enter')
    await tab.locator('table.entries td.summary').first().waitFor()
    assert.deepEqual(await texts(tab, 'table.entries td.summary'), [
      'info: order 42 shipped to Lisbon',
      'info: order 41 shipped to Lisbon',
    ])
    // narrowed to one type
    await tab.goto(`${url}/console#/search?q=42`)
    await tab.getByRole('link', { name: 'GET /orders/42' }).waitFor()
    assert.deepEqual(await texts(tab, 'table.entries td.summary'), [
      'info: order 42 shipped to Lisbon',
      'GET /orders/42',
    ])
    await tab.locator('.filters select[name="type"]').selectOption('request')
    await tab.getByRole('button', { name: 'Apply' }).click()
    await tab.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('table.entries tbody tr').length === 1
    )
    assert.deepEqual(await texts(tab, 'table.entries td.summary'), ['GET /orders/42'])
    await tab.goBack()
    await tab.goBack()
    await tab.getByRole('link', { name: 'info: order 41 shipped to Lisbon' }).click()
    await tab.locator('dl.fields').waitFor()
    assert.deepEqual(await texts(tab, 'dl.fields dd'), ['info', 'order 41 shipped to Lisbon'])

    // health: the route with its two requests, and the chart
    await tab.getByRole('link', { name: 'Health' }).click()
    await tab.locator('table.routes tbody tr').first().waitFor()
    const route = await tab
      .locator('table.routes tbody tr')
      .filter({ hasText: '/orders/:id' })
      .locator('td')
      .allTextContents()
    assert.deepEqual(route.slice(0, 4), ['GET', '/orders/:id', '2', '0'])
    assert.isAbove(await tab.locator('svg.chart rect.requests').count(), 0)

    // sign out lands back on the auth screen
    await tab.getByRole('button', { name: 'Sign out' }).click()
    await tab.locator('form.login').waitFor()
    assert.deepEqual(policyViolations, [])
    assert.deepEqual(pageErrors, [])
  })

  test('entry text renders as text, and a lost session returns to the auth screen', async ({
    assert,
  }) => {
    const { url, flush } = await dashboardApp()
    await fetch(`${url}/hostile`)
    await flush()
    const { context, tab } = await open(url)
    await signIn(tab, 'lovelace')
    await tab.getByRole('link', { name: 'Logs' }).click()
    const line = tab.getByRole('link', {
      name: 'info: <img src=x onerror="window.__pwned=1"> sneaky',
    })
    await line.waitFor()
    assert.equal(await tab.locator('main img').count(), 0)
    await line.click()
    await tab.locator('dl.fields').waitFor()
    assert.equal(await tab.locator('main img').count(), 0)
    assert.isUndefined(await tab.evaluate(() => (globalThis as any).__pwned))

    await context.clearCookies()
    await tab.getByRole('link', { name: 'Queries' }).click()
    await tab.locator('form.login').waitFor()
  })

  test('filters narrow a list, "Load more" follows the cursor, exceptions are grouped', async ({
    assert,
  }) => {
    const { url, flush } = await dashboardApp()
    for (let index = 0; index < 52; index++) await fetch(`${url}/ping`)
    for (let index = 0; index < 2; index++) await fetch(`${url}/ping`, { method: 'POST' })
    for (const id of ['1', '2']) await fetch(`${url}/boom/${id}`)
    await flush()
    const { tab } = await open(url)
    await signIn(tab, 'lovelace')

    const rows = tab.locator('table.entries tbody tr')
    await rows.nth(49).waitFor()
    assert.equal(await rows.count(), 50)
    await tab.getByRole('button', { name: 'Load more' }).click()
    await rows.nth(55).waitFor()
    const links = await tab
      .locator('table.entries td.summary a')
      .evaluateAll((elements) =>
        elements.map((link) => (link as any).getAttribute('href') as string)
      )
    assert.lengthOf(links, 56)
    assert.equal(new Set(links).size, 56)
    assert.equal(await tab.getByRole('button', { name: 'Load more' }).count(), 0)

    await tab.locator('.filters select[name="method"]').selectOption('POST')
    await tab.getByRole('button', { name: 'Apply' }).click()
    await tab.waitForFunction(() => (globalThis as any).location.hash === '#/requests?method=POST')
    await tab.waitForFunction(
      () => (globalThis as any).document.querySelectorAll('table.entries tbody tr').length === 2
    )
    assert.deepEqual(await texts(tab, 'table.entries td.summary'), ['POST /ping', 'POST /ping'])

    await tab.goto(`${url}/console#/requests?status=5xx`)
    await tab.getByRole('link', { name: 'GET /boom/1' }).waitFor()
    assert.deepEqual(await texts(tab, 'table.entries td.summary'), ['GET /boom/2', 'GET /boom/1'])
    assert.equal(await tab.locator('.filters input[name="status"]').inputValue(), '5xx')

    await tab.getByRole('link', { name: 'Exceptions' }).click()
    await tab.locator('table.families tbody tr').first().waitFor()
    const family = await tab.locator('table.families tbody tr').allTextContents()
    assert.lengthOf(family, 1)
    assert.match(family[0], /^2Error/)
  })

  test('the Events screen lists a recorded event, search offers extension types, Prune now reports', async ({
    assert,
  }) => {
    const { url, flush, manager } = await dashboardApp({
      watchers: [watchers.events()],
      extensions: [defineConsoleExtension({ name: 'billing', entryTypes: ['invoice'] })],
      prune: { maxRows: { request: 1 }, intervalMs: false },
      authorizeAction: (_ctx, action) => action.name === 'prune',
    })
    for (const id of ['1', '2', '3']) {
      assert.equal(await fetch(`${url}/checkout/${id}`).then((response) => response.status), 200)
    }
    const invoice = entryId()
    await manager.store.write([
      {
        id: invoice,
        batchId: invoice,
        type: 'invoice' as any,
        summary: 'invoice INV-7 paid',
        status: null,
        method: null,
        durationMs: null,
        slow: false,
        tags: [],
        createdAt: Date.now(),
        content: {},
      },
    ])
    await flush()
    const { tab, policyViolations, pageErrors } = await open(url)
    await signIn(tab, 'lovelace')

    // the Events screen: the three events, then one opened with its redacted payload
    await tab.getByRole('link', { name: 'Events', exact: true }).click()
    await tab.locator('table.entries tbody tr').nth(2).waitFor()
    assert.deepEqual(await texts(tab, 'table.entries td.summary'), [
      'order:placed',
      'order:placed',
      'order:placed',
    ])
    await tab.getByRole('link', { name: 'order:placed' }).first().click()
    await tab.locator('dl.fields').waitFor()
    const payload = JSON.stringify({ orderId: 3, password: '[redacted]' })
    assert.deepEqual(await texts(tab, 'dl.fields dd'), [
      'order:placed',
      'named event',
      `${payload.length} bytes`,
    ])
    const shown = await tab.locator('main pre').first().textContent()
    assert.deepEqual(JSON.parse(shown!), { orderId: 3, password: '[redacted]' })
    assert.notInclude(await tab.locator('main').textContent(), 'browser-secret')

    // search's type filter offers the extension's type next to the built-in ones
    await tab.goto(`${url}/console#/search?q=paid`)
    await tab.getByRole('link', { name: 'invoice INV-7 paid' }).waitFor()
    const select = tab.locator('.filters select[name="type"]')
    await select.locator('option[value="invoice"]').waitFor({ state: 'attached' })
    assert.includeMembers(await select.locator('option').allTextContents(), [
      'Events',
      'invoice (billing)',
    ])
    await select.selectOption('invoice')
    await tab.getByRole('button', { name: 'Apply' }).click()
    await tab.waitForFunction(() => (globalThis as any).location.hash.includes('type=invoice'))
    await tab.getByRole('link', { name: 'invoice INV-7 paid' }).waitFor()
    assert.equal(await select.inputValue(), 'invoice')

    // Prune now keeps the newest request (maxRows) and says what it deleted
    await tab.getByRole('link', { name: 'Health' }).click()
    await tab.locator('table.routes').waitFor()
    // the three checkouts and whatever the browser asked the host for (its favicon)
    await flush()
    const recorded = await manager.store.list({ type: 'request', limit: 10 })
    const requests = recorded.data.length
    assert.isAtLeast(requests, 3)
    await tab.getByRole('button', { name: 'Prune now' }).click()
    const status = tab.locator('.prune-now [role="status"]')
    await status.waitFor()
    assert.equal(await status.textContent(), `Pruned: deleted ${requests - 1} request.`)
    const kept = await manager.store.list({ type: 'request', limit: 10 })
    assert.lengthOf(kept.data, 1)
    // the health view reads the stored counts again, counted afresh after the prune
    await tab.waitForFunction(() =>
      [...(globalThis as any).document.querySelectorAll('table.kv tr')].some(
        (row: any) =>
          row.querySelector('th')?.textContent === 'request' &&
          row.querySelector('td')?.textContent === '1'
      )
    )
    assert.deepEqual(policyViolations, [])
    assert.deepEqual(pageErrors, [])
  })

  test('Prune now shows the refusal when authorizeAction denies it', async ({ assert }) => {
    const { url } = await dashboardApp()
    const { tab } = await open(url)
    await signIn(tab, 'lovelace')
    await tab.getByRole('link', { name: 'Health' }).click()
    await tab.getByRole('button', { name: 'Prune now' }).click()
    const refusal = tab.locator('.prune-now [role="alert"]')
    await refusal.waitFor()
    assert.equal(await refusal.textContent(), 'Not allowed to prune')
    assert.equal(await tab.locator('.prune-now [role="status"]').count(), 0)
  })

  test('in session mode the auth screen offers "continue with my account"', async ({ assert }) => {
    const { url } = await dashboardApp({
      dashboardAuth: {
        secret: SECRET,
        session: (ctx) =>
          ctx.request.header('cookie')?.includes('host_session=ok')
            ? { id: '7', name: 'Grace' }
            : null,
      },
    })
    const { context, tab } = await open(url)
    const button = tab.getByRole('button', { name: 'Continue with my account' })
    await button.waitFor()
    assert.equal(await tab.locator('form.login').count(), 0)
    await button.click()
    await tab.getByRole('alert').waitFor()

    await context.addCookies([{ name: 'host_session', value: 'ok', url }])
    await button.click()
    await tab.getByRole('button', { name: 'Sign out' }).waitFor()
    assert.include(await tab.locator('header .user').textContent(), 'Grace')
  })

  test('a CPU profile renders as a flame graph that zooms, with its label and download', async ({
    assert,
  }) => {
    const { url, flush, manager } = await dashboardApp({
      profiling: { enabled: true, sampleRate: 1 },
      authorizeAction: () => true,
    })
    assert.equal(await fetch(`${url}/crunch`).then((response) => response.status), 200)
    await manager.profiler!.settled()
    await new Promise((resolve) => setImmediate(resolve))
    await flush()
    const { tab, policyViolations, pageErrors } = await open(url)
    await signIn(tab, 'lovelace')
    await tab.getByRole('link', { name: 'CPU profiles' }).click()
    await tab.getByRole('link', { name: 'CPU profile: GET /crunch' }).click()

    const graph = tab.getByRole('group', { name: 'Flame graph' })
    await graph.waitFor()
    assert.isAbove(await graph.locator('.frame').count(), 3)
    const crunch = graph.locator('.frame[data-name="crunchNumbersForTheFlameGraph"]')
    assert.equal(await crunch.count(), 1)
    const width = (await crunch.boundingBox())!.width
    assert.isAbove(width, 0)
    assert.include(
      await tab.locator('.shared-window').textContent(),
      'No other request ran during this window'
    )
    const download = tab.getByRole('link', { name: 'Download .cpuprofile' })
    assert.match((await download.getAttribute('href'))!, /\/console\/api\/profiles\/\w+\/download$/)

    // clicking a frame zooms to it: it spans the whole graph, and the path leads back
    await crunch.click()
    await tab
      .getByRole('navigation', { name: 'Zoom' })
      .getByRole('button', { name: 'crunchNumbersForTheFlameGraph' })
      .waitFor()
    const graphWidth = (await graph.boundingBox())!.width
    const zoomed = (await crunch.boundingBox())!.width
    assert.isAbove(zoomed, width)
    assert.isAtLeast(zoomed, graphWidth - 4)
    await tab.getByRole('button', { name: 'All samples' }).click()
    await tab.waitForFunction(
      () => (globalThis as any).document.querySelector('.flame-path button').disabled === true
    )
    assert.deepEqual(policyViolations, [])
    assert.deepEqual(pageErrors, [])
  })
})
