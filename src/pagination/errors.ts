import { Exception } from '@adonisjs/core/exceptions'
import type { HttpContext } from '@adonisjs/core/http'

/**
 * A request asked for something the filter definition does not declare, or
 * sent a value that cannot be coerced. Renders a 400 naming what was wrong.
 */
export class InvalidPaginationQueryException extends Exception {
  static status = 400
  static code = 'E_INVALID_PAGINATION_QUERY'

  /** The query-string parameter at fault (`filter[amount]`, `sort`, `include`) */
  parameter: string

  constructor(message: string, parameter: string) {
    super(message, { status: 400, code: 'E_INVALID_PAGINATION_QUERY' })
    this.parameter = parameter
  }

  async handle(error: this, ctx: HttpContext) {
    ctx.response
      .status(error.status)
      .send({ errors: [{ message: error.message, code: error.code, parameter: error.parameter }] })
  }
}

/**
 * `findPage` was given an adapter without one of the four keyset methods.
 */
export class KeysetAdapterException extends Exception {
  static status = 500
  static code = 'E_KEYSET_ADAPTER'
  constructor() {
    super(
      'findPage requires an adapter implementing getResult, getPrimaryKey, applyKeysetPagination and applyKeysetOrderAndLimit',
      { status: 500, code: 'E_KEYSET_ADAPTER' }
    )
  }
}

export const E_INVALID_PAGINATION_QUERY = InvalidPaginationQueryException
export const E_KEYSET_ADAPTER = KeysetAdapterException
