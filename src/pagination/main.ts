/**
 * Public API of `adonis-atrium/pagination`.
 */
export { defineConfig } from './define_config.ts'
export type { PaginationConfig } from './types.ts'
