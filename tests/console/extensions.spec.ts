import { test } from '@japa/runner'
import { EventEmitter } from 'node:events'
import type { Router } from '@adonisjs/core/http'
import { consoleApp, SECRET, sessionCookie } from './helpers.ts'
import { defineConsoleExtension, errors } from '../../src/console/main.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import type { ConsoleExtensionOptions } from '../../src/console/main.ts'

/** What the app under test emits when an order is placed; the extension's watcher listens */
function shop() {
  const events = new EventEmitter()
  const stopped: string[] = []
  const extension = defineConsoleExtension({
    name: 'shop',
    entryTypes: ['order'],
    watchers: [
      {
        name: 'orders',
        install({ record }) {
          const placed = (order: { id: string; total: number; cardNumber?: string }) =>
            record({
              type: 'order',
              summary: `order ${order.id} placed`,
              tags: ['shop', 'not a tag!'],
              content: { order, card_number: order.cardNumber },
            })
          const odd = () => record({ type: 'refund', summary: 'undeclared' })
          events.on('placed', placed)
          events.on('odd', odd)
          return () => {
            events.off('placed', placed)
            events.off('odd', odd)
            stopped.push('orders')
          }
        },
      },
    ],
    dataProviders: {
      revenue: (ctx) => ({ currency: ctx.request.qs().currency ?? 'EUR', total: 1250 }),
      broken: () => {
        throw new Error('database password is hunter2')
      },
      bigint: () => ({ total: 10n }),
      missing: () => {
        throw new errors.E_CONSOLE_NOT_FOUND('No such region')
      },
    },
    pages: [{ title: 'Revenue', provider: 'revenue' }],
  })
  const routes = (router: Router) => {
    router.get('/checkout', () => {
      events.emit('placed', { id: 'A-17', total: 1250, cardNumber: '4242424242424242' })
      return { ok: true }
    })
    router.get('/odd', () => {
      events.emit('odd')
      return { ok: true }
    })
  }
  return { extension, routes, stopped }
}

test.group('Console extensions', () => {
  test("an extension's watcher records its own entry type, listed and searchable like built-in ones", async ({
    assert,
  }) => {
    const { extension, routes } = shop()
    const { url, api, manager } = await consoleApp({
      config: { extensions: [extension], buffer: { flushIntervalMs: 60_000 } },
      routes,
    })
    assert.equal(await fetch(`${url}/checkout`).then((response) => response.status), 200)
    await manager.recorder.flush()

    const list = await api('/order')
    assert.equal(list.status, 200)
    const { data } = (await list.json()) as any
    assert.lengthOf(data, 1)
    assert.deepInclude(data[0], { type: 'order', summary: 'order A-17 placed', tags: ['shop'] })
    const [request] = ((await api('/requests').then((response) => response.json())) as any).data
    assert.equal(data[0].batchId, request.id)

    const entry = (await api(`/entries/${data[0].id}`).then((response) => response.json())) as any
    assert.equal(entry.data.content.card_number, '[redacted]')
    assert.equal(entry.data.content.order.total, 1250)

    const search = (await api('/search?q=A-17&type=order').then((response) =>
      response.json()
    )) as any
    assert.deepEqual(
      search.data.map((item: any) => item.id),
      [data[0].id]
    )
    const everywhere = (await api('/search?q=placed').then((response) => response.json())) as any
    assert.include(
      everywhere.data.map((item: any) => item.type),
      'order'
    )
  })

  test('an entry of a type no extension declares is dropped and warned about once', async ({
    assert,
  }) => {
    const { extension, routes } = shop()
    const { url, manager, warnings } = await consoleApp({
      config: { extensions: [extension], buffer: { flushIntervalMs: 60_000 } },
      routes,
    })
    await fetch(`${url}/odd`)
    await fetch(`${url}/odd`)
    await manager.recorder.flush()
    const all = await manager.store.list({ limit: 50 })
    assert.deepEqual(
      all.data.map((entry) => entry.type),
      ['request', 'request']
    )
    assert.lengthOf(
      warnings.filter((line) => line.includes('"refund"')),
      1
    )
  })

  test('prune keeps maxRows of a custom type as of a built-in one', async ({ assert }) => {
    const { extension, routes } = shop()
    const { url, manager } = await consoleApp({
      config: {
        extensions: [extension],
        buffer: { flushIntervalMs: 60_000 },
        prune: { maxRows: 1, intervalMs: false },
      },
      routes,
    })
    for (let index = 0; index < 3; index++) await fetch(`${url}/checkout`)
    await manager.recorder.flush()
    const before = await manager.store.list({ type: 'order' as any, limit: 50 })
    assert.lengthOf(before.data, 3)
    const deleted = await manager.prune()
    assert.equal((deleted as Record<string, number>).order, 2)
    const after = await manager.store.list({ type: 'order' as any, limit: 50 })
    assert.deepEqual(
      after.data.map((entry) => entry.id),
      [before.data[0].id]
    )
  })

  test('the watcher is stopped when the console shuts down', async ({ assert }) => {
    const { extension, routes, stopped } = shop()
    const { manager } = await consoleApp({ config: { extensions: [extension] }, routes })
    assert.deepEqual(stopped, [])
    await manager.shutdown()
    assert.deepEqual(stopped, ['orders'])
  })

  test('a data provider answers its JSON, and the extensions list names its pages', async ({
    assert,
  }) => {
    const { extension } = shop()
    const { api } = await consoleApp({ config: { extensions: [extension] } })
    const response = await api('/extensions/shop/revenue?currency=BRL')
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { data: { currency: 'BRL', total: 1250 } })

    const index = (await api('/extensions').then((value) => value.json())) as any
    assert.deepEqual(index.data, [
      {
        name: 'shop',
        entryTypes: [{ type: 'order', url: '/console/api/order' }],
        providers: ['revenue', 'broken', 'bigint', 'missing'],
        pages: [
          { title: 'Revenue', provider: 'revenue', url: '/console/api/extensions/shop/revenue' },
        ],
      },
    ])
  })

  test('data providers sit behind the read gates: 401 without a session, 403 when refused', async ({
    assert,
  }) => {
    const { extension } = shop()
    let calls = 0
    const { api } = await consoleApp({
      config: {
        extensions: [
          defineConsoleExtension({
            name: 'counted',
            dataProviders: { calls: () => ++calls },
          }),
          extension,
        ],
        dashboardAuth: { secret: SECRET, login: () => null },
        authorizer: (ctx) => ctx.consoleSession?.roles.includes('ops') ?? false,
      },
    })
    const anonymous = await api('/extensions/counted/calls')
    assert.equal(anonymous.status, 401)
    const refused = await api('/extensions/counted/calls', {
      headers: { cookie: sessionCookie({ roles: ['sales'] }) },
    })
    assert.equal(refused.status, 403)
    assert.equal(((await refused.json()) as any).errors[0].code, 'E_CONSOLE_FORBIDDEN')
    assert.equal(calls, 0)
    const allowed = await api('/extensions/counted/calls', {
      headers: { cookie: sessionCookie({ roles: ['ops'] }) },
    })
    assert.deepEqual(await allowed.json(), { data: 1 })
    assert.equal(
      await api('/extensions', { headers: { cookie: sessionCookie({ roles: ['sales'] }) } }).then(
        (value) => value.status
      ),
      403
    )
  })

  test('in production without authorizer a data provider is denied (403)', async ({ assert }) => {
    const { extension } = shop()
    const { api } = await consoleApp({ production: true, config: { extensions: [extension] } })
    assert.equal(await api('/extensions/shop/revenue').then((value) => value.status), 403)
  })

  test('an unknown extension or provider is a JSON 404, prototype names included', async ({
    assert,
  }) => {
    const { extension } = shop()
    const { api } = await consoleApp({ config: { extensions: [extension] } })
    for (const path of [
      '/extensions/nope/revenue',
      '/extensions/shop/nope',
      '/extensions/shop/constructor',
      '/extensions/shop/__proto__',
      '/extensions/shop/toString',
    ]) {
      const response = await api(path)
      assert.equal(response.status, 404, path)
      assert.equal(((await response.json()) as any).errors[0].code, 'E_CONSOLE_NOT_FOUND', path)
    }
  })

  test('a failing provider is a 502 JSON error without its message; its own 4xx passes through', async ({
    assert,
  }) => {
    const { extension } = shop()
    const { api, warnings } = await consoleApp({ config: { extensions: [extension] } })
    for (const provider of ['broken', 'bigint']) {
      const response = await api(`/extensions/shop/${provider}`)
      assert.equal(response.status, 502)
      const text = await response.text()
      assert.notInclude(text, 'hunter2')
      assert.deepEqual(JSON.parse(text).errors[0], {
        code: 'E_CONSOLE_EXTENSION_FAILED',
        message: `Data provider "${provider}" of extension "shop" failed`,
        extension: 'shop',
        provider,
      })
    }
    await api('/extensions/shop/broken')
    assert.lengthOf(
      warnings.filter((line) => line.includes('"broken"')),
      1
    )
    const missing = await api('/extensions/shop/missing')
    assert.equal(missing.status, 404)
    assert.equal(((await missing.json()) as any).errors[0].message, 'No such region')
  })

  test('a watcher whose install throws is a boot error naming it', async ({ assert }) => {
    const failing = defineConsoleExtension({
      name: 'failing',
      watchers: [
        {
          name: 'exploding',
          install() {
            throw new Error('no emitter')
          },
        },
      ],
    })
    await assert.rejects(
      () => consoleApp({ config: { extensions: [failing] } }),
      /Watcher "exploding" in "extensions\[failing\]\.watchers" of config\/console\.ts failed to install: no emitter/
    )
  })
})

test.group('Console extensions: config errors', () => {
  const extension = (options: Partial<ConsoleExtensionOptions>) =>
    ({ name: 'shop', ...options }) as ConsoleExtensionOptions

  const cases: [string, () => unknown, RegExp][] = [
    [
      'an uppercase name',
      () => defineConsoleExtension(extension({ name: 'Shop' })),
      /Invalid extension name "Shop" in "extensions"/,
    ],
    [
      'an uppercase entry type',
      () => defineConsoleExtension(extension({ entryTypes: ['Order'] })),
      /Invalid entry type "Order" in "extensions\[shop\]\.entryTypes"/,
    ],
    [
      'an entry type longer than the column',
      () => defineConsoleExtension(extension({ entryTypes: ['a_very_long_order_type'] })),
      /Invalid entry type "a_very_long_order_type"/,
    ],
    [
      'a built-in entry type',
      () => defineConsoleExtension(extension({ entryTypes: ['query'] })),
      /Entry type "query" in "extensions\[shop\]\.entryTypes" of config\/console\.ts is a built-in type/,
    ],
    [
      'an entry type that names an API route',
      () => defineConsoleExtension(extension({ entryTypes: ['search'] })),
      /Entry type "search" .* is a built-in type or API route/,
    ],
    [
      'a page showing an undeclared provider',
      () =>
        defineConsoleExtension(extension({ pages: [{ title: 'Revenue', provider: 'revenue' }] })),
      /Page "Revenue" in "extensions\[shop\]\.pages" .* shows provider "revenue", which "extensions\[shop\]\.dataProviders" does not declare/,
    ],
    [
      'a provider that is not a function',
      () => defineConsoleExtension(extension({ dataProviders: { revenue: 42 as any } })),
      /Invalid "extensions\[shop\]\.dataProviders\.revenue"/,
    ],
    [
      'two extensions of one name',
      () =>
        resolveConsoleConfig({
          extensions: [
            defineConsoleExtension({ name: 'shop' }),
            defineConsoleExtension({ name: 'shop' }),
          ],
        }),
      /Duplicate extension "shop" in "extensions"/,
    ],
    [
      'one entry type declared twice',
      () =>
        resolveConsoleConfig({
          extensions: [
            defineConsoleExtension({ name: 'shop', entryTypes: ['order'] }),
            defineConsoleExtension({ name: 'billing', entryTypes: ['order'] }),
          ],
        }),
      /Entry type "order" is declared by both extensions "shop" and "billing"/,
    ],
    [
      'a watcher name already taken',
      () =>
        resolveConsoleConfig({
          extensions: [
            defineConsoleExtension({ name: 'shop', watchers: [{ name: 'queries', install() {} }] }),
          ],
          watchers: [{ name: 'queries', options: {} }],
        }),
      /Duplicate watcher "queries" in "extensions\[shop\]\.watchers"/,
    ],
    [
      'extensions that is not a list',
      () => resolveConsoleConfig({ extensions: {} as any }),
      /Invalid "extensions" in config\/console\.ts: use a list/,
    ],
  ]
  for (const [name, run, message] of cases) {
    test(`${name} is a config error naming the option`, ({ assert }) => {
      assert.throws(run, message)
      try {
        run()
      } catch (error) {
        assert.instanceOf(error, errors.E_CONSOLE_CONFIG)
      }
    })
  }
})
