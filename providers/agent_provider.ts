import type { ApplicationService } from '@adonisjs/core/types'
import type { AgentManager } from '../src/agent/manager.ts'
import type { ResolvedAgentConfig } from '../src/agent/types.ts'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'atrium.agent': AgentManager
  }
}

/**
 * Serves the agent gateway: binds 'atrium.agent', mounts the chat and thread
 * routes in boot(), and aborts the runs in flight on shutdown. The AI SDK
 * and the Lucid store load only when the app boots with config/agent.ts.
 */
export default class AgentProvider {
  #manager?: AgentManager

  constructor(protected app: ApplicationService) {}

  #resolved?: Promise<ResolvedAgentConfig>

  /** The resolved config/agent.ts; a missing or hand-written one names the fix */
  #config(): Promise<ResolvedAgentConfig> {
    this.#resolved ??= (async () => {
      const { configProvider } = await import('@adonisjs/core')
      const { AgentConfigException } = await import('../src/agent/errors.ts')
      const raw = this.app.config.get<unknown>('agent', undefined)
      const resolved = await configProvider.resolve<ResolvedAgentConfig>(this.app, raw)
      if (!resolved) {
        throw new AgentConfigException(
          'Missing config/agent.ts, or it does not export defineConfig() from adonis-atrium/agent. Run "node ace configure adonis-atrium --features=agent"'
        )
      }
      return resolved
    })()
    return this.#resolved
  }

  register() {
    this.app.container.singleton('atrium.agent', async () => {
      const { AgentManager } = await import('../src/agent/manager.ts')
      return new AgentManager(this.app, await this.#config())
    })
  }

  async boot() {
    const environment = this.app.getEnvironment()
    if (environment !== 'web' && environment !== 'test') {
      return
    }
    const config = await this.#config()
    await config.store.assertReady()
    const { registerAgentRoutes } = await import('../src/agent/http/routes.ts')
    const router = await this.app.container.make('router')
    registerAgentRoutes(router, config)
    if (config.dashboard) {
      const { registerDashboardRoutes } = await import('../src/agent/http/dashboard.ts')
      registerDashboardRoutes(router, config.dashboard)
    }
    this.#manager = await this.app.container.make('atrium.agent')
  }

  /**
   * The HTTP server's terminating hook waits for every open connection, and
   * providers shut down after it: abort the runs first so their SSE streams
   * end, or a graceful stop with a client reading a stalled run never ends.
   * Hooks registered later run first.
   */
  async ready() {
    const manager = this.#manager
    if (manager) {
      this.app.terminating(() => manager.shutdown())
    }
  }

  async shutdown() {
    await this.#manager?.shutdown()
  }
}
