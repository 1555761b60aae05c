/**
 * Public API of `adonis-atrium/pagination`.
 */
export { defineConfig } from './define_config.ts'
export { defineFilters, FilterRunner, type TableSource } from './filter_runner.ts'
export { PaginationManager } from './manager.ts'
export { LucidAdapter } from './adapters/lucid.ts'
export type { QueryBuilderLike, QueryClientLike } from './adapters/query_builder.ts'
export {
  encodeCursor,
  decodeCursor,
  keysetFingerprint,
  KeysetDate,
  MAX_CURSOR_LENGTH,
  type CursorOptions,
} from './cursor.ts'
export { buildKeyset, extractCursorValues, parseSort } from './keyset.ts'
export { MAX_LIST_ITEMS, MAX_VALUE_LENGTH } from './values.ts'
export { toHttpPage, type HttpCursorPage } from './http.ts'
export * as errors from './errors.ts'
export type * from './types.ts'
