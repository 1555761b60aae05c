import { test } from '@japa/runner'
import type { HttpContext, Router } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { consoleApp, SECRET } from './helpers.ts'
import { consoleMountPaths, isConsolePath, watchers } from '../../src/console/main.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'

/**
 * The app's own capture, as docs/console.md shows it: router middleware that
 * leaves the console's paths alone and hands every other request to the
 * console's request watcher. `delegated` lists what it handed over.
 */
function appRoutes(delegated: string[]) {
  return (router: Router) => {
    class AppRequestCapture {
      async handle(ctx: HttpContext, next: NextFn) {
        const url = ctx.request.url()
        if (isConsolePath(url, consoleMountPaths())) return next()
        delegated.push(url)
        const consoleManager = await ctx.containerResolver.make('atrium.console')
        return consoleManager.requestWatcher.handle(ctx, next)
      }
    }
    router.use([async () => ({ default: AppRequestCapture })])
    router.get('/orders', async (ctx) => {
      const db = await ctx.containerResolver.make('lucid.db')
      await db.rawQuery('select ? as marker', ['orders'])
      return { orders: [] }
    })
  }
}

test.group('Console mount paths', () => {
  test('lists the API, sign-in, client errors, page, assets and MCP paths the config mounts', ({
    assert,
  }) => {
    const config = resolveConsoleConfig({
      path: '/ops',
      dashboardAuth: { secret: SECRET, login: () => null },
      clientErrors: { enabled: true },
      mcp: { token: SECRET, path: '/ai' },
    })
    assert.deepEqual(consoleMountPaths(config), [
      '/ops/api',
      '/ops/api/auth',
      '/ops/api/client-errors',
      '/ops',
      '/ops/assets',
      '/ops/ai',
    ])
    const apiOnly = resolveConsoleConfig({ path: '/ops', ui: { enabled: false } })
    assert.deepEqual(consoleMountPaths(apiOnly), ['/ops/api'])
    assert.isTrue(isConsolePath('/ops/api/requests', consoleMountPaths(apiOnly)))
    assert.isFalse(isConsolePath('/ops', consoleMountPaths(apiOnly)))
    assert.isFalse(isConsolePath('/ops-report', consoleMountPaths(config)))
  })

  test('without an argument it answers for the console this process booted', async ({ assert }) => {
    await consoleApp({ config: { path: '/admin/console', registerRequestMiddleware: false } })
    assert.deepEqual(consoleMountPaths(), [
      '/admin/console/api',
      '/admin/console',
      '/admin/console/assets',
    ])
  })

  test('with the app registering capture itself, app requests are recorded and console requests are not', async ({
    assert,
  }) => {
    const delegated: string[] = []
    const { url, api, manager } = await consoleApp({
      config: {
        registerRequestMiddleware: false,
        watchers: [watchers.queries()],
        buffer: { flushIntervalMs: 60_000 },
      },
      routes: appRoutes(delegated),
    })
    assert.equal(await fetch(`${url}/orders`).then((response) => response.status), 200)
    assert.equal(await api('/requests').then((response) => response.status), 200)
    assert.equal(await api('/queries').then((response) => response.status), 200)
    assert.equal(await fetch(`${url}/console`).then((response) => response.status), 200)
    await manager.recorder.flush()

    assert.deepEqual(delegated, ['/orders'])
    const requests = await manager.store.list({ type: 'request', limit: 50 })
    assert.deepEqual(
      requests.data.map((entry) => entry.summary),
      ['GET /orders']
    )
    // the console's own reads ran outside the app's capture and still recorded no query
    const queries = await manager.store.list({ type: 'query', limit: 50 })
    assert.lengthOf(queries.data, 1)
    assert.equal(queries.data[0].batchId, requests.data[0].id)
  })

  test('with registerRequestMiddleware false and no capture of the app, nothing records requests', async ({
    assert,
  }) => {
    const { url, manager } = await consoleApp({
      config: { registerRequestMiddleware: false },
      routes: (router) => router.get('/orders', () => ({ orders: [] })),
    })
    assert.equal(await fetch(`${url}/orders`).then((response) => response.status), 200)
    await manager.recorder.flush()
    const requests = await manager.store.list({ type: 'request', limit: 50 })
    assert.lengthOf(requests.data, 0)
  })
})
