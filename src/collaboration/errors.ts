import { Exception } from '@adonisjs/core/exceptions'
import type { HttpContext } from '@adonisjs/core/http'

/**
 * Base of the collaboration errors: renders `{ error: { code, message } }`
 * with its own status when it reaches the HTTP layer.
 */
class CollabException extends Exception {
  async handle(error: this, ctx: HttpContext) {
    ctx.response.status(error.status).send({ error: { code: error.code, message: error.message } })
  }
}

/**
 * `authorize` denied `canRead` (or a write permission), or `issueToken` was
 * called without an `authorize` rule. Final: retrying does not help.
 */
export class CollabForbiddenError extends CollabException {
  static status = 403
  static code = 'E_COLLAB_FORBIDDEN'
  static message = 'Access to this collaboration document is denied'
}

/**
 * `authorize` itself threw. Retryable, and never mistaken for a denial.
 */
export class CollabAuthorizationError extends CollabException {
  static status = 503
  static code = 'E_COLLAB_AUTHORIZATION_FAILED'
  static message = 'Could not evaluate the authorization rule for this document; retry later'
  retryable = true
}

/**
 * No user resolved for a route that needs one.
 */
export class CollabUnauthorizedError extends CollabException {
  static status = 401
  static code = 'E_COLLAB_UNAUTHORIZED'
  static message = 'Sign in to use collaboration routes'
}

/**
 * No signing key anywhere: tokens are neither issued nor accepted.
 */
export class CollabTokenSecretMissingError extends CollabException {
  static status = 500
  static code = 'E_COLLAB_TOKEN_SECRET_MISSING'
  static message =
    'No collaboration token secret. Set "tokenSecret" in config/collaboration.ts (COLLAB_TOKEN_SECRET) or the application key (APP_KEY)'
}

/**
 * A configuration mistake found at boot or in `defineConfig`.
 */
export class CollabConfigError extends Exception {
  static status = 500
  static code = 'E_COLLAB_CONFIG'
}

/**
 * Unknown version id, missing storage and other misuse of the manager.
 */
export class CollabNotFoundError extends CollabException {
  static status = 404
  static code = 'E_COLLAB_NOT_FOUND'
}

/**
 * A request body or query that failed validation.
 */
export class CollabValidationError extends CollabException {
  static status = 422
  static code = 'E_COLLAB_VALIDATION'
}

/**
 * Storage refused a document write (a flush, a compaction): the change is
 * still live and the engine retries, but nothing reports it stored.
 */
export class CollabStorageError extends CollabException {
  static status = 503
  static code = 'E_COLLAB_STORAGE'
  retryable = true
}
