import { AtriumException } from '../shared/errors.ts'

/**
 * `config/console.ts` is invalid: raised by `defineConfig` or at boot, naming
 * the key and the fix.
 */
export class ConsoleConfigException extends AtriumException {
  static status = 500
  static code = 'E_CONSOLE_CONFIG'
}

/**
 * No valid dashboard session (missing, tampered, expired or malformed
 * cookie), a failed login, or a host guard that refused the request: 401.
 */
export class ConsoleUnauthenticatedException extends AtriumException {
  static status = 401
  static code = 'E_CONSOLE_UNAUTHENTICATED'

  static message = 'Authentication required'
}

/**
 * Authenticated (or no session gate) but refused by `authorizer` or
 * `authorizeAction`: 403.
 */
export class ConsoleForbiddenException extends AtriumException {
  static status = 403
  static code = 'E_CONSOLE_FORBIDDEN'

  static message = 'Not allowed'
}

/**
 * An auth mode that is not configured, or an entry or batch that does not exist: 404.
 */
export class ConsoleNotFoundException extends AtriumException {
  static status = 404
  static code = 'E_CONSOLE_NOT_FOUND'
}

/**
 * A query parameter or body the console API cannot use: 400 naming the parameter.
 */
export class ConsoleInvalidQueryException extends AtriumException {
  static status = 400
  static code = 'E_CONSOLE_INVALID_QUERY'

  constructor(message: string, parameter: string) {
    super(message, { status: 400, code: 'E_CONSOLE_INVALID_QUERY', details: { parameter } })
  }
}

export const E_CONSOLE_CONFIG = ConsoleConfigException
export const E_CONSOLE_UNAUTHENTICATED = ConsoleUnauthenticatedException
export const E_CONSOLE_FORBIDDEN = ConsoleForbiddenException
export const E_CONSOLE_NOT_FOUND = ConsoleNotFoundException
export const E_CONSOLE_INVALID_QUERY = ConsoleInvalidQueryException
