import { configProvider } from '@adonisjs/core'
import type { ConfigProvider } from '@adonisjs/core/types'
import { PaginationConfigException } from './errors.ts'
import type { PaginationConfig } from './types.ts'

function positiveInteger(name: keyof PaginationConfig, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new PaginationConfigException(
      `Invalid "${name}" in config/pagination.ts: expected a positive integer, received ${JSON.stringify(value)}`
    )
  }
  return value
}

/**
 * Validates pagination options and fills in their defaults, synchronously:
 * what `defineConfig` resolves to, and what `runner.with({ config })` reads.
 */
export function resolvePaginationConfig(config: Partial<PaginationConfig> = {}): PaginationConfig {
  if (!config || typeof config !== 'object') {
    throw new PaginationConfigException(
      'Invalid config/pagination.ts: export defineConfig({...}) from "adonis-atrium/pagination"'
    )
  }
  const defaultPageSize = positiveInteger('defaultPageSize', config.defaultPageSize ?? 25)
  const maxPageSize = positiveInteger('maxPageSize', config.maxPageSize ?? 100)
  if (defaultPageSize > maxPageSize) {
    throw new PaginationConfigException(
      `Invalid "defaultPageSize" in config/pagination.ts: ${defaultPageSize} is larger than "maxPageSize" (${maxPageSize}). Lower it or raise "maxPageSize"`
    )
  }
  if (config.cursorSecret !== undefined && typeof config.cursorSecret !== 'string') {
    throw new PaginationConfigException(
      `Invalid "cursorSecret" in config/pagination.ts: expected a string. Set PAGINATION_CURSOR_SECRET or remove the option`
    )
  }
  return { defaultPageSize, maxPageSize, cursorSecret: config.cursorSecret || undefined }
}

/**
 * Validates the pagination config (now, so a bad option fails at import
 * with its name and fix) and returns the provider `atrium.pagination` resolves.
 */
export function defineConfig(
  config: Partial<PaginationConfig> = {}
): ConfigProvider<PaginationConfig> {
  const resolved = resolvePaginationConfig(config)
  return configProvider.create(async () => resolved)
}
