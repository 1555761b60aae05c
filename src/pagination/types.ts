/**
 * Pagination options read from `config/pagination.ts`.
 */
export interface PaginationConfig {
  /** Rows per page when a request asks for none */
  defaultPageSize: number
  /** Largest page a request may ask for, unless the call passes `trustedPageSize` */
  maxPageSize: number
  /** Signs cursors with HMAC-SHA256 when set; unsigned cursors are then ignored */
  cursorSecret?: string
}
