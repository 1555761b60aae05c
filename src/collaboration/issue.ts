import type { HttpContext } from '@adonisjs/core/http'
import { collaboration } from './current.ts'
import { CollabUnauthorizedError } from './errors.ts'
import type { CollaborationManager } from './manager.ts'
import { issueToken } from './tokens.ts'
import type { CollabTokenInfo } from './types.ts'

/**
 * Issues a token outside the routes (for server-rendered pages): the user is
 * given or resolved from `ctx`, and the document's rule is checked as the
 * handshake would. Throws `CollabUnauthorizedError` or `CollabForbiddenError`.
 */
export async function issueCollaborationToken(
  input: {
    docName: string
    user?: { id: string | number; name?: string | null; avatarUrl?: string | null }
    ctx?: HttpContext
  },
  options: { manager?: CollaborationManager; baseUrl?: string } = {}
): Promise<CollabTokenInfo> {
  const manager = options.manager ?? collaboration.current
  let user = input.user
  if (!user && input.ctx) {
    const { defaultResolveUser } = await import('./http/routes.ts')
    const resolve = manager.config.routes.resolveUser ?? defaultResolveUser
    user = (await resolve(input.ctx)) ?? undefined
  }
  if (!user) {
    throw new CollabUnauthorizedError()
  }
  const context = input.ctx ?? { connection: { userId: String(user.id) } }
  const permission = manager.hasAuthorizeRule(input.docName)
    ? await manager.authorize(context, input.docName)
    : undefined
  const baseUrl =
    options.baseUrl ??
    (input.ctx ? `${input.ctx.request.protocol()}://${input.ctx.request.host()}` : undefined)
  return issueToken(
    { ...manager.config, engineName: await manager.engineFor({ docName: input.docName }), baseUrl },
    user,
    input.docName,
    permission
  )
}
