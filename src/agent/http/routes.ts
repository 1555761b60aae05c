import type { Router } from '@adonisjs/core/http'
import type { ResolvedAgentConfig } from '../types.ts'
import * as controllers from './controllers.ts'

/**
 * Mounts the chat, catalog and thread routes under `/<path>` (default
 * `/agent`), with the configured middleware on every one of them.
 */
export function registerAgentRoutes(
  router: Router,
  config: Pick<ResolvedAgentConfig, 'path' | 'middleware'>
) {
  const group = router
    .group(() => {
      router.post('chat', controllers.chat).as('chat')
      router.get('chat/:runId/stream', controllers.resume).as('chat.stream')
      router.post('chat/:runId/cancel', controllers.cancel).as('chat.cancel')
      router.get('agents', controllers.catalog).as('agents')
      router.get('threads', controllers.listThreads).as('threads.index')
      router.get('threads/:id', controllers.showThread).as('threads.show')
      router.patch('threads/:id', controllers.updateThread).as('threads.update')
      router.delete('threads/:id', controllers.deleteThread).as('threads.destroy')
    })
    .prefix(`/${config.path}`)
    .as('atrium.agent')
  if (config.middleware.length) {
    group.use(config.middleware as any)
  }
  return group
}
