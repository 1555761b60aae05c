import { test } from '@japa/runner'
import { defineConfig } from '../../src/pagination/main.ts'
import { setupApp } from '../helpers.ts'

test.group('Pagination config', () => {
  test('fills in the defaults', ({ assert }) => {
    assert.deepEqual(defineConfig({}), {
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
  })

  test('the provider binds the validated config', async ({ assert }) => {
    const { app } = await setupApp({
      http: false,
      providers: [() => import('../../providers/pagination_provider.ts')],
      config: { pagination: defineConfig({ maxPageSize: 40 }) },
    })
    const config = await app.container.make('atrium.pagination.config')
    assert.equal(config.maxPageSize, 40)
  })
})
