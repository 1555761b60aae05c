import { RuntimeException } from '@adonisjs/core/exceptions'
import type { PaginationConfig } from './types.ts'

function positiveInteger(name: keyof PaginationConfig, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RuntimeException(
      `Invalid "${name}" in config/pagination.ts: expected a positive integer, received ${JSON.stringify(value)}`
    )
  }
  return value
}

/**
 * Validates the pagination config and fills in its defaults.
 */
export function defineConfig(config: Partial<PaginationConfig> = {}): PaginationConfig {
  const defaultPageSize = positiveInteger('defaultPageSize', config.defaultPageSize ?? 25)
  const maxPageSize = positiveInteger('maxPageSize', config.maxPageSize ?? 100)
  if (defaultPageSize > maxPageSize) {
    throw new RuntimeException(
      `Invalid "defaultPageSize" in config/pagination.ts: ${defaultPageSize} is larger than "maxPageSize" (${maxPageSize}). Lower it or raise "maxPageSize"`
    )
  }
  if (config.cursorSecret !== undefined && typeof config.cursorSecret !== 'string') {
    throw new RuntimeException(
      `Invalid "cursorSecret" in config/pagination.ts: expected a string. Set PAGINATION_CURSOR_SECRET or remove the option`
    )
  }
  return { defaultPageSize, maxPageSize, cursorSecret: config.cursorSecret || undefined }
}
