import type { HttpContext, Router } from '@adonisjs/core/http'
import type { MiddlewareFn } from '@adonisjs/core/types/http'
import type { AgentMiddleware, LazyMiddleware, ResolvedAgentConfig } from '../types.ts'

/**
 * A lazy import takes no argument, a middleware function takes (ctx, next):
 * lazy imports become a function that makes the class through the container
 * once per request, as Adonis does for its own lazy middleware.
 */
export function toRouteMiddleware(entry: AgentMiddleware): AgentMiddleware {
  if (typeof entry !== 'function' || entry.length !== 0) {
    return entry
  }
  const lazy = entry as LazyMiddleware
  const fn: MiddlewareFn = async (ctx: HttpContext, next) => {
    const { default: Middleware } = await lazy()
    const instance = await ctx.containerResolver.make(Middleware)
    return instance.handle(ctx, next)
  }
  return fn
}
import * as controllers from './controllers.ts'
import { uploadAttachment } from '../attachments/upload.ts'

/**
 * Mounts the chat, catalog and thread routes under `/<path>` (default
 * `/agent`), and the upload route with `attachments.upload`, with the
 * configured middleware on every one of them.
 */
export function registerAgentRoutes(
  router: Router,
  config: Pick<ResolvedAgentConfig, 'path' | 'middleware' | 'attachments'>
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
      router.post('threads/:id/fork-from/:messageId', controllers.forkThread).as('threads.fork')
      router.post('threads/:id/promote', controllers.promoteThread).as('threads.promote')
      router
        .delete('threads/:id/from/:messageId', controllers.truncateThread)
        .as('threads.truncate')
      router.post('tool-call/approve', controllers.approveToolCall).as('tool_call.approve')
      router.post('tool-call/reject', controllers.rejectToolCall).as('tool_call.reject')
      router.get('quota/today', controllers.quotaToday).as('quota.today')
      if (config.attachments.upload) {
        router.post('attachments', uploadAttachment).as('attachments.store')
      }
    })
    .prefix(`/${config.path}`)
    .as('atrium.agent')
  if (config.middleware.length) {
    group.use(config.middleware.map(toRouteMiddleware) as any)
  }
  return group
}
