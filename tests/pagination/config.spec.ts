import { test } from '@japa/runner'
import { configProvider } from '@adonisjs/core'
import {
  defineConfig,
  defineFilters,
  errors,
  PaginationManager,
} from '../../src/pagination/main.ts'
import { setupApp } from '../helpers.ts'
import { PgTestOrder } from './helpers.ts'

const provider = () => import('../../providers/pagination_provider.ts')

test.group('Pagination config', () => {
  test('defineConfig returns a config provider resolving to the defaults', async ({ assert }) => {
    const { app } = await setupApp({ http: false })
    const config = defineConfig({})
    assert.equal(config.type, 'provider')
    assert.deepEqual(await configProvider.resolve(app, config), {
      defaultPageSize: 25,
      maxPageSize: 100,
      cursorSecret: undefined,
    })
  })

  test('names the option and the fix for a bad value', ({ assert }) => {
    assert.throws(
      () => defineConfig({ maxPageSize: 0 }),
      'Invalid "maxPageSize" in config/pagination.ts: expected a positive integer, received 0'
    )
    assert.throws(
      () => defineConfig({ defaultPageSize: 500 }),
      /"defaultPageSize" in config\/pagination\.ts: 500 is larger than "maxPageSize" \(100\)/
    )
    const runner = defineFilters(PgTestOrder, {})
    assert.throws(
      () => runner.with({ config: { maxPageSize: -1 } }),
      'Invalid "maxPageSize" in config/pagination.ts: expected a positive integer, received -1'
    )
  })

  test('the provider binds one atrium.pagination, which runners and the service read', async ({
    assert,
  }) => {
    const { app } = await setupApp({
      http: false,
      providers: [provider],
      config: { pagination: defineConfig({ maxPageSize: 40 }) },
    })
    const manager = await app.container.make('atrium.pagination')
    assert.instanceOf(manager, PaginationManager)
    assert.equal(manager.config.maxPageSize, 40)
    assert.strictEqual(await app.container.make('atrium.pagination'), manager)
    assert.strictEqual(await app.container.make('atrium.pagination.config'), manager.config)
    const { default: service } = await import('../../services/pagination.ts')
    assert.strictEqual(service, manager)

    // A runner made before boot (a model file's defineFilters) reads the booted config
    const runner = defineFilters(PgTestOrder, { sortable: ['createdAt'] })
    assert.equal(runner.parse({ paginate: { first: 500 } }).paginate.first, 40)
    // ...once: the app's config is not read again per call
    app.config.set('pagination', defineConfig({ defaultPageSize: 5, maxPageSize: 5 }))
    assert.equal(runner.parse({ paginate: { first: 500 } }).paginate.first, 40)
    // Explicit options win, for tests and scripts
    assert.equal(
      runner
        .with({ config: { defaultPageSize: 5, maxPageSize: 7 } })
        .parse({ paginate: { first: 500 } }).paginate.first,
      7
    )
    assert.equal(manager.defineFilters(PgTestOrder, {}).parse({ perPage: 500 }).perPage, 40)
  })

  test('a missing or hand-written config/pagination.ts is a boot error naming the fix', async ({
    assert,
  }) => {
    for (const pagination of [undefined, { maxPageSize: 40 }]) {
      const attempt = setupApp({ http: false, providers: [provider], config: { pagination } })
      const error = await attempt.then(
        () => null,
        (caught) => caught
      )
      assert.instanceOf(error, errors.PaginationConfigException)
      assert.match(error.message, /config\/pagination\.ts: export defineConfig/)
    }
  })
})

test.group('Pagination config without the provider', () => {
  test('a runner with no booted config and no explicit one says how to give it one', async ({
    assert,
  }) => {
    const { setBootedPaginationConfig } = await import('../../src/pagination/current.ts')
    setBootedPaginationConfig(undefined)
    const runner = defineFilters(PgTestOrder, {})
    assert.throws(
      () => runner.parse({}),
      /register "adonis-atrium\/providers\/pagination_provider" in adonisrc\.ts .*runner\.with\(\{ config/
    )
    assert.equal(runner.with({ config: {} }).parse({}).perPage, 25)
  })
})
