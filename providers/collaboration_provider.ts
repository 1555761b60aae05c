import type { ApplicationService } from '@adonisjs/core/types'
import type { Server } from 'node:http'
import type { CollaborationManager } from '../src/collaboration/manager.ts'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'atrium.collaboration': CollaborationManager
  }
}

/**
 * Serves collaborative documents: binds `atrium.collaboration` (the manager,
 * built once from config/collaboration.ts), mounts the REST routes in boot(),
 * attaches the WebSocket upgrade handler to the HTTP server in ready(), and
 * flushes every document on shutdown.
 */
export default class CollaborationProvider {
  #manager?: CollaborationManager

  constructor(protected app: ApplicationService) {}

  register() {
    this.app.container.singleton('atrium.collaboration', async () => {
      const { createCollaborationManager } = await import('../src/collaboration/boot.ts')
      return createCollaborationManager(this.app, { appKey: this.#appKey() })
    })
  }

  /**
   * In the web and test environments: builds the manager (a missing package,
   * an engine this release does not serve or a missing worker secret fails
   * here), mounts the routes and routes reported errors to the app logger.
   * Ace commands never build it.
   */
  async boot() {
    const environment = this.app.getEnvironment()
    if (environment !== 'web' && environment !== 'test') {
      return
    }
    const { setCollaborationLogger } = await import('../src/collaboration/observability.ts')
    setCollaborationLogger(await this.app.container.make('logger'))

    const manager = await this.app.container.make('atrium.collaboration')
    this.#manager = manager
    // a booted hook runs after those the app registered before booting (where
    // it may run its migrations, as the demo does)
    this.app.booted(() => manager.config.storage.assertReady?.())
    if (manager.config.routes.enabled) {
      const { collaborationRoutes } = await import('../src/collaboration/http/routes.ts')
      collaborationRoutes(await this.app.container.make('router'), {
        prefix: manager.config.routes.prefix,
        middleware: manager.config.routes.middleware,
        manager,
      })
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
      await this.#manager.close()
      this.#manager = undefined
    }
  }
}
