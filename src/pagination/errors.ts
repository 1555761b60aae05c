import { AtriumException } from '../shared/errors.ts'

/**
 * A request asked for something the filter definition does not declare, or
 * sent a value that does not fit its field (or a cursor made for another
 * sort). Renders `{ errors: [{ code, message, parameter }] }` with a 400.
 */
export class InvalidPaginationQueryException extends AtriumException {
  static status = 400
  static code = 'E_PAGINATION_INVALID_QUERY'

  /** The query-string parameter at fault (`filter[amount]`, `sort`, `paginate[after]`) */
  readonly parameter: string

  constructor(message: string, parameter: string) {
    super(message, { status: 400, code: 'E_PAGINATION_INVALID_QUERY', details: { parameter } })
    this.parameter = parameter
  }
}

/**
 * `findPage` was given an adapter without one of the four keyset methods.
 */
export class KeysetAdapterException extends AtriumException {
  static status = 500
  static code = 'E_PAGINATION_ADAPTER'
  constructor() {
    super(
      'findPage requires an adapter implementing getResult, getPrimaryKey, applyKeysetPagination and applyKeysetOrderAndLimit',
      { status: 500, code: 'E_PAGINATION_ADAPTER' }
    )
  }
}

/**
 * A pagination option or filter definition the runner cannot work with: the
 * message names the file or definition, the key and the fix.
 */
export class PaginationConfigException extends AtriumException {
  static status = 500
  static code = 'E_PAGINATION_CONFIG'
}

export const E_PAGINATION_INVALID_QUERY = InvalidPaginationQueryException
/** The former name of `E_PAGINATION_INVALID_QUERY` */
export const E_INVALID_PAGINATION_QUERY = InvalidPaginationQueryException
export const E_PAGINATION_ADAPTER = KeysetAdapterException
/** The former name of `E_PAGINATION_ADAPTER` */
export const E_KEYSET_ADAPTER = KeysetAdapterException
export const E_PAGINATION_CONFIG = PaginationConfigException
