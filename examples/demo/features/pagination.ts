import type { DemoFeature } from './main.ts'
import { layout } from './layout.ts'

/**
 * Keyset pagination over the demo's orders table.
 */
export const pagination: DemoFeature = {
  title: 'Keyset pagination',
  description: 'Filter, search, sort and walk pages by cursor.',
  path: '/pagination',
  routes(router) {
    router.get('/pagination', async () => {
      const config = await import('@adonisjs/core/services/app').then(({ default: app }) =>
        app.container.make('atrium.pagination.config')
      )
      return layout(
        'Keyset pagination',
        `<p>Pages hold up to <strong>${config.defaultPageSize}</strong> rows by default, at most <strong>${config.maxPageSize}</strong>.</p>`
      )
    })
  },
}
