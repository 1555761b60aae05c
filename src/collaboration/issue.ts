import type { HttpContext } from '@adonisjs/core/http'
import { assertDocumentName } from './document_name.ts'
import { CollabUnauthorizedError } from './errors.ts'
import type { CollaborationManager } from './manager.ts'
import { issueToken } from './tokens.ts'
import type { CollabTokenInfo } from './types.ts'

/**
 * What `collaboration.issueToken()` takes: the document, and the user given
 * or resolved from `ctx` (with `routes.resolveUser`, else `ctx.auth`).
 */
export interface IssueTokenInput {
  docName: string
  user?: { id: string | number; name?: string | null; avatarUrl?: string | null }
  ctx?: HttpContext
}

/**
 * Issues a token outside the routes (for server-rendered pages): the
 * document's rule is checked as the handshake would. Throws
 * `E_COLLAB_UNAUTHORIZED` without a user and `E_COLLAB_FORBIDDEN` on a denial.
 */
export async function issueCollaborationToken(
  manager: CollaborationManager,
  input: IssueTokenInput,
  options: { baseUrl?: string } = {}
): Promise<CollabTokenInfo> {
  assertDocumentName(input.docName)
  let user = input.user
  if (!user && input.ctx) {
    const { defaultResolveUser } = await import('./http/resolve_user.ts')
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
