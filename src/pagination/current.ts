import { PaginationConfigException } from './errors.ts'
import type { PaginationConfig } from './types.ts'

let booted: Readonly<PaginationConfig> | undefined

/**
 * Set by the pagination provider once the app has booted (cleared on shutdown).
 */
export function setBootedPaginationConfig(config: Readonly<PaginationConfig> | undefined) {
  booted = config
}

/**
 * The config resolved at boot, for runners given no explicit `config`.
 */
export function bootedPaginationConfig(): Readonly<PaginationConfig> {
  if (!booted) {
    throw new PaginationConfigException(
      'FilterRunner has no pagination config: register "adonis-atrium/providers/pagination_provider" in adonisrc.ts (with config/pagination.ts), or pass one with runner.with({ config: { maxPageSize: 100 } })'
    )
  }
  return booted
}
