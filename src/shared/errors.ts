import { Exception } from '@adonisjs/core/exceptions'
import type { HttpContext } from '@adonisjs/core/http'

/**
 * One entry of the JSON error body every Atrium route answers with:
 * `{ errors: [{ code, message, ...details }] }`, the shape Adonis itself uses
 * for validation and rate-limit errors.
 */
export interface AtriumErrorBody {
  errors: Array<{ code: string; message: string; [detail: string]: unknown }>
}

/**
 * Base of every error an Atrium feature raises. Subclasses declare a static
 * `status`, `code` and (when fixed) `message`; `handle()` renders the shared
 * JSON body with that status, so controllers throw and never render errors.
 */
export class AtriumException extends Exception {
  /**
   * Extra fields of the body entry (`parameter`, `provider`, `retryable`, ...).
   * Never put a secret or a request payload here: the body goes to clients.
   */
  details?: Record<string, unknown>

  constructor(
    message?: string,
    options?: ErrorOptions & { code?: string; status?: number; details?: Record<string, unknown> }
  ) {
    super(message, options)
    this.details = options?.details
  }

  /** The JSON body this error renders as */
  toResponseBody(): AtriumErrorBody {
    return { errors: [{ code: this.code ?? 'E_ATRIUM', message: this.message, ...this.details }] }
  }

  async handle(error: this, ctx: HttpContext) {
    ctx.response.status(error.status).send(error.toResponseBody())
  }
}

/**
 * A feature is enabled (or one of its drivers configured) but an optional
 * package it needs is not installed. Raised at boot, one line naming the
 * package and the command that installs it.
 */
export class MissingPackageException extends AtriumException {
  static status = 500
  static code = 'E_ATRIUM_MISSING_PACKAGE'

  constructor(packages: string[], usedFor: string, options?: ErrorOptions) {
    const names = packages.map((name) => `"${name}"`).join(', ')
    super(
      `${usedFor} needs ${names}, which ${packages.length > 1 ? 'are' : 'is'} not installed. Run: npm install ${packages.join(' ')}`,
      { ...options, status: 500, code: 'E_ATRIUM_MISSING_PACKAGE' }
    )
  }
}

export const E_ATRIUM_MISSING_PACKAGE = MissingPackageException
