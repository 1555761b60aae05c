import type { ApplicationService } from '@adonisjs/core/types'
import type { PaginationConfig } from '../src/pagination/types.ts'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'atrium.pagination.config': PaginationConfig
  }
}

/**
 * Binds the validated pagination config; the runner itself is created per
 * model by app code and needs no singleton.
 */
export default class PaginationProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton('atrium.pagination.config', async () => {
      const { defineConfig } = await import('../src/pagination/define_config.ts')
      return defineConfig(this.app.config.get<Partial<PaginationConfig>>('pagination', {}))
    })
  }
}
