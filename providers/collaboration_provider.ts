import type { ApplicationService } from '@adonisjs/core/types'
import type { Server } from 'node:http'
import type { CollaborationManager } from '../src/collaboration/manager.ts'
import type { CollaborationConfig } from '../src/collaboration/types.ts'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'atrium.collaboration': CollaborationManager
  }
}

/**
 * Serves collaborative documents: binds the manager, mounts the REST routes
 * in boot(), attaches the WebSocket upgrade handler to the HTTP server in
 * ready(), and flushes every document on shutdown.
 */
export default class CollaborationProvider {
  #manager?: CollaborationManager

  constructor(protected app: ApplicationService) {}

  async #config(): Promise<CollaborationConfig> {
    const { configProvider } = await import('@adonisjs/core')
    const { defineConfig } = await import('../src/collaboration/define_config.ts')
    const raw = this.app.config.get<any>('collaboration', {})
    const resolved = (await configProvider.resolve<any>(this.app, raw)) ?? raw
    return resolved && 'storageIsDefault' in resolved ? resolved : defineConfig(resolved)
  }

  register() {
    this.app.container.singleton('atrium.collaboration', async () => {
      const { CollaborationManager } = await import('../src/collaboration/manager.ts')
      return CollaborationManager.create(await this.#config())
    })
  }

  async boot() {
    const config = await this.#config()
    const { configureTokenSecrets } = await import('../src/collaboration/tokens.ts')
    configureTokenSecrets({
      tokenSecret: config.tokenSecret,
      appKey: this.#appKey(),
    })
    const serves = this.app.getEnvironment() === 'web' || this.app.getEnvironment() === 'test'
    if (config.routes.enabled && serves) {
      const { collaborationRoutes } = await import('../src/collaboration/http/routes.ts')
      const router = await this.app.container.make('router')
      collaborationRoutes(router, {
        prefix: config.routes.prefix,
        middleware: config.routes.middleware,
        resolveUser: config.routes.resolveUser,
        manager: () => this.app.container.make('atrium.collaboration'),
      })
    }
    if (serves) {
      const { setCurrentCollaborationManager } = await import('../src/collaboration/current.ts')
      const { setCollaborationLogger } = await import('../src/collaboration/observability.ts')
      this.#manager = await this.app.container.make('atrium.collaboration')
      setCurrentCollaborationManager(this.#manager)
      setCollaborationLogger(await this.app.container.make('logger'))
    }
  }

  /**
   * The application key: `app.appKey` when the app config has one (Adonis 6
   * layout), else the `APP_KEY` variable that config/encryption.ts reads.
   */
  #appKey(): string | undefined {
    const fromConfig = this.app.config.get<any>('app.appKey', undefined)
    const value = fromConfig?.release ? fromConfig.release() : fromConfig
    return (typeof value === 'string' && value) || process.env.APP_KEY || undefined
  }

  async ready() {
    if (!this.#manager) {
      return
    }
    /**
     * The HTTP server's own terminating hook waits for every open socket, and
     * providers shut down only after it: close the WebSockets (flushing every
     * document) first, or a graceful stop with connected clients never ends.
     * Hooks registered later run first.
     */
    const manager = this.#manager
    this.app.terminating(() => manager.close())
    const server = await this.app.container.make('server')
    const nodeServer = server.getNodeServer()
    if (nodeServer) {
      this.attach(nodeServer as Server)
    }
  }

  /**
   * Attaches the upgrade handler to a Node.js server started after ready()
   * (as under `node ace test`).
   */
  attach(server: Server) {
    this.#manager?.attach(server)
  }

  async shutdown() {
    if (this.#manager) {
      const { setCurrentCollaborationManager } = await import('../src/collaboration/current.ts')
      await this.#manager.close()
      setCurrentCollaborationManager(undefined)
      this.#manager = undefined
    }
  }
}
