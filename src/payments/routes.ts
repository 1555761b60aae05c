import type { Router } from '@adonisjs/core/http'
import type { ResolvedPaymentsConfig } from './types.ts'

/**
 * Mounts `POST <prefix>/:provider` (default `/payments/webhook/:provider`).
 * The provider calls it in `boot()`; with `routes.enabled: false` call it
 * yourself from `start/routes.ts`, inside a group if you like.
 */
export function registerRoutes(
  router: Router,
  config: Pick<ResolvedPaymentsConfig, 'routes'> = {
    routes: { enabled: true, prefix: '/payments/webhook', middleware: [] },
  }
) {
  const route = router
    .post(`${config.routes.prefix}/:provider`, async (ctx) => {
      const manager = await ctx.containerResolver.make('atrium.payments')
      return manager.handleHttp(ctx)
    })
    .as('atrium.payments.webhook')
  if (config.routes.middleware.length) {
    route.use(config.routes.middleware)
  }
  return route
}
