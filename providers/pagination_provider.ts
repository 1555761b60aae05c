import { configProvider } from '@adonisjs/core'
import type { ApplicationService } from '@adonisjs/core/types'
import type { PaginationManager } from '../src/pagination/manager.ts'
import type { PaginationConfig } from '../src/pagination/types.ts'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'atrium.pagination': PaginationManager
    /** The resolved config of `atrium.pagination` (kept for apps that read it) */
    'atrium.pagination.config': Readonly<PaginationConfig>
  }
}

/**
 * Binds `atrium.pagination`, the config resolved once from
 * config/pagination.ts, and hands it to every runner at boot.
 */
export default class PaginationProvider {
  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton('atrium.pagination', async () => {
      const [{ PaginationManager }, { PaginationConfigException }] = await Promise.all([
        import('../src/pagination/manager.ts'),
        import('../src/pagination/errors.ts'),
      ])
      const config = await configProvider.resolve<PaginationConfig>(
        this.app,
        this.app.config.get('pagination', undefined)
      )
      if (!config) {
        throw new PaginationConfigException(
          'Missing or invalid config/pagination.ts: export defineConfig({...}) from "adonis-atrium/pagination" (run "node ace configure adonis-atrium --features=pagination")'
        )
      }
      return new PaginationManager(config)
    })
    this.app.container.singleton('atrium.pagination.config', async (resolver) => {
      const manager = await resolver.make('atrium.pagination')
      return manager.config
    })
  }

  async boot() {
    const manager = await this.app.container.make('atrium.pagination')
    const { setBootedPaginationConfig } = await import('../src/pagination/current.ts')
    setBootedPaginationConfig(manager.config)
  }

  async shutdown() {
    const { setBootedPaginationConfig } = await import('../src/pagination/current.ts')
    setBootedPaginationConfig(undefined)
  }
}
