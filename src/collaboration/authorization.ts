import type { HttpContext } from '@adonisjs/core/http'
import { findDocumentDeclaration } from './define_config.ts'
import { CollabAuthorizationError } from './errors.ts'
import { reportCollaborationError } from './observability.ts'
import type { CollabAuthorizeContext, CollabPermission, CollaborationConfig } from './types.ts'

const DENY: CollabPermission = Object.freeze({
  canRead: false,
  canWrite: false,
  canComment: false,
})

/** The possible grants, shared (frozen) by every connection */
const PERMISSIONS = new Map<string, CollabPermission>()

/** What a rule answered, as one of the shared grants: no `canRead: true`, no access */
function normalizePermission(
  value: Partial<CollabPermission> | null | undefined
): CollabPermission {
  if (!value || value.canRead !== true) {
    return DENY
  }
  const canWrite = value.canWrite === true
  const canComment = value.canComment === true
  const key = `${canWrite}:${canComment}`
  let permission = PERMISSIONS.get(key)
  if (!permission) {
    permission = Object.freeze({ canRead: true, canWrite, canComment })
    PERMISSIONS.set(key, permission)
  }
  return permission
}

/**
 * The permission of `ctx` on `docName`: the first matching pattern's rule,
 * then the global rule, else deny. A throwing rule is reported and raised
 * as the retryable `CollabAuthorizationError`.
 */
export async function authorizeDocument(
  config: CollaborationConfig,
  ctx: HttpContext | CollabAuthorizeContext,
  docName: string
): Promise<CollabPermission> {
  const match = findDocumentDeclaration(config.documents, docName)
  try {
    if (match?.declaration.authorize) {
      return normalizePermission(
        await match.declaration.authorize(ctx, { docName, params: match.params })
      )
    }
    if (config.authorize) {
      return normalizePermission(await config.authorize(ctx, docName))
    }
  } catch (error) {
    reportCollaborationError({ scope: 'authorize', operation: 'authorize', docName, error })
    throw new CollabAuthorizationError(undefined, { cause: error })
  }
  return DENY
}

/** True when some rule (pattern or global) could grant access to the document */
export function hasAuthorizeRule(config: CollaborationConfig, docName: string) {
  return Boolean(
    findDocumentDeclaration(config.documents, docName)?.declaration.authorize ?? config.authorize
  )
}
