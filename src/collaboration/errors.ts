import type { HttpContext } from '@adonisjs/core/http'
import { AtriumException } from '../shared/errors.ts'

/**
 * `authorize` denied `canRead` (or a write permission), or a token was asked
 * for without an `authorize` rule. Final: retrying does not help.
 */
export class CollabForbiddenError extends AtriumException {
  static status = 403
  static code = 'E_COLLAB_FORBIDDEN'
  static message = 'Access to this collaboration document is denied'
}

/**
 * `authorize` itself threw. Retryable, and never mistaken for a denial.
 */
export class CollabAuthorizationError extends AtriumException {
  static status = 503
  static code = 'E_COLLAB_AUTHORIZATION_FAILED'
  static message = 'Could not evaluate the authorization rule for this document; retry later'
  retryable = true
  details = { retryable: true }
}

/**
 * No user resolved for a route that needs one.
 */
export class CollabUnauthorizedError extends AtriumException {
  static status = 401
  static code = 'E_COLLAB_UNAUTHORIZED'
  static message =
    'Sign in to use collaboration routes (the routes take the user from "routes.resolveUser" in config/collaboration.ts, else ctx.auth)'
}

/**
 * No signing key anywhere: tokens are neither issued nor accepted.
 */
export class CollabTokenSecretMissingError extends AtriumException {
  static status = 500
  static code = 'E_COLLAB_TOKEN_SECRET_MISSING'
  static message =
    'No collaboration token secret. Set "tokenSecret" in config/collaboration.ts (COLLAB_TOKEN_SECRET) or the application key (APP_KEY)'
}

/**
 * A configuration mistake found at boot or in `defineConfig`.
 */
export class CollabConfigError extends AtriumException {
  static status = 500
  static code = 'E_COLLAB_CONFIG'
}

/**
 * Unknown version id, comment or document.
 */
export class CollabNotFoundError extends AtriumException {
  static status = 404
  static code = 'E_COLLAB_NOT_FOUND'
}

/**
 * A request body, query or document name that failed validation.
 */
export class CollabValidationError extends AtriumException {
  static status = 422
  static code = 'E_COLLAB_VALIDATION'
}

/**
 * A request body larger than the route accepts.
 */
export class CollabBodyTooLargeError extends AtriumException {
  static status = 413
  static code = 'E_COLLAB_BODY_TOO_LARGE'
}

/**
 * A storage refused a write (a flush, a compaction, a value longer than its
 * column): nothing reports it stored. Live changes stay in memory and the
 * engine retries its saves.
 */
export class CollabStorageError extends AtriumException {
  static status = 500
  static code = 'E_COLLAB_STORAGE'
}

/**
 * The collaboration service is closing (the app is shutting down). The
 * response closes its connection: a client polling over keep-alive must not
 * hold the HTTP server's graceful close open.
 */
export class CollabShuttingDownError extends AtriumException {
  static status = 503
  static code = 'E_COLLAB_SHUTTING_DOWN'
  static message = 'The collaboration server is shutting down; retry shortly'
  retryable = true
  details = { retryable: true }

  async handle(error: this, ctx: HttpContext) {
    ctx.response.header('connection', 'close')
    ctx.response.header('retry-after', '1')
    await super.handle(error, ctx)
  }
}

/**
 * The room worker of a hosted document did not take a state the app pushed
 * (a restored version): the stored document holds it, and the room shows it
 * once it next loads. Retryable.
 */
export class CollabRoomError extends AtriumException {
  static status = 502
  static code = 'E_COLLAB_ROOM'
  static message = 'The room worker did not take the document state; retry later'
  retryable = true
  details = { retryable: true }
}

export const E_COLLAB_FORBIDDEN = CollabForbiddenError
export const E_COLLAB_AUTHORIZATION_FAILED = CollabAuthorizationError
export const E_COLLAB_UNAUTHORIZED = CollabUnauthorizedError
export const E_COLLAB_TOKEN_SECRET_MISSING = CollabTokenSecretMissingError
export const E_COLLAB_CONFIG = CollabConfigError
export const E_COLLAB_NOT_FOUND = CollabNotFoundError
export const E_COLLAB_VALIDATION = CollabValidationError
export const E_COLLAB_BODY_TOO_LARGE = CollabBodyTooLargeError
export const E_COLLAB_STORAGE = CollabStorageError
export const E_COLLAB_SHUTTING_DOWN = CollabShuttingDownError
export const E_COLLAB_ROOM = CollabRoomError
