import type { LucidModel } from '@adonisjs/lucid/types/model'
import { FilterRunner, type TableSource } from './filter_runner.ts'
import type { FilterDefinition, PaginationConfig } from './types.ts'

/**
 * What `atrium.pagination` resolves to: the config resolved once at boot,
 * which every runner without an explicit `config` reads.
 */
export class PaginationManager {
  constructor(readonly config: Readonly<PaginationConfig>) {}

  /**
   * A runner bound to this manager's config (for runners made after boot,
   * e.g. per tenant); `defineFilters` reads the same config by default.
   */
  defineFilters<Model extends LucidModel>(
    source: Model | TableSource,
    definition: FilterDefinition<Extract<keyof InstanceType<Model>, string>> | FilterDefinition
  ): FilterRunner<InstanceType<Model>> {
    return new FilterRunner<InstanceType<Model>>(source, definition as FilterDefinition, {
      config: this.config,
    })
  }
}
