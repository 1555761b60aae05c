import type { ApplicationService } from '@adonisjs/core/types'
import type { ConsoleManager } from '../src/console/manager.ts'
import type { ResolvedConsoleConfig } from '../src/console/types.ts'

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'atrium.console': ConsoleManager
  }
}

/**
 * Registers the console manager; in the web and test environments mounts the
 * page and the API, registers the request watcher as server middleware and
 * installs the watchers; in `node ace queue:work` records jobs. Flushes
 * buffered entries on shutdown.
 */
export default class ConsoleProvider {
  #manager?: ConsoleManager

  constructor(protected app: ApplicationService) {}

  async #config(): Promise<ResolvedConsoleConfig> {
    const { configProvider } = await import('@adonisjs/core')
    const raw = this.app.config.get<unknown>('console')
    const resolved = raw ? await configProvider.resolve<ResolvedConsoleConfig>(this.app, raw) : null
    if (!resolved || typeof resolved !== 'object' || !('storage' in resolved)) {
      const { E_CONSOLE_CONFIG } = await import('../src/console/errors.ts')
      throw new E_CONSOLE_CONFIG(
        'Missing config/console.ts. Run "node ace configure adonis-atrium --features=console" or export defineConfig({...}) from adonis-atrium/console in config/console.ts'
      )
    }
    return resolved
  }

  register() {
    this.app.container.singleton('atrium.console', async () => {
      const config = await this.#config()
      const { ConsoleManager } = await import('../src/console/manager.ts')
      const logger = await this.app.container.make('logger')
      return new ConsoleManager(this.app, config, await config.storage.resolver(this.app), logger)
    })
  }

  async boot() {
    const config = await this.#config()
    const environment = this.app.getEnvironment()
    if (environment === 'console') return this.#recordQueueWorker(config)
    if (!config.enabled || (environment !== 'web' && environment !== 'test')) return

    const manager = await this.app.container.make('atrium.console')
    this.#manager = manager
    if (config.registerRequestMiddleware) {
      const watcher = manager.requestWatcher
      class ConsoleRequestMiddleware {
        handle(...args: Parameters<typeof watcher.handle>) {
          return watcher.handle(...args)
        }
      }
      // one instance for the app's life, bound as a value: the container hands it over per
      // request without building it, and without the asynchronous steps of a singleton's resolver
      this.app.container.bindValue(ConsoleRequestMiddleware, new ConsoleRequestMiddleware())
      const server = await this.app.container.make('server')
      server.use([async () => ({ default: ConsoleRequestMiddleware })])
    }
    // before any route: `mcp: true` in production and a missing SDK (MCP's or the AI SDK) are boot errors
    const { prepareMcp } = await import('../src/console/mcp/sdk.ts')
    await prepareMcp(config.mcp, this.app.inProduction)
    const { prepareAiDiagnosis } = await import('../src/console/ai/diagnoser.ts')
    await prepareAiDiagnosis(config.ai)
    const { registerConsoleRoutes } = await import('../src/console/http/routes.ts')
    registerConsoleRoutes(await this.app.container.make('router'), manager)
    const logger = await this.app.container.make('logger')
    logger.info(manager.gates.describe())
    await manager.start()
  }

  /**
   * `node ace queue:work` and `node ace scheduler:run` (adonisjs-scheduler)
   * run in the console environment, where nothing else records: with
   * `watchers.jobs()` (or `watchers.schedules()`) configured, the worker
   * records the jobs (or task runs) it runs and what they do (queries, logs,
   * outgoing HTTP), flushed on shutdown. Every other command records nothing.
   */
  async #recordQueueWorker(config: ResolvedConsoleConfig) {
    const workers = new Set<string>()
    for (const watcher of config.watchers) {
      if (watcher.name === 'jobs') workers.add('queue:work')
      if (watcher.name === 'schedules') workers.add('scheduler:run')
    }
    if (!config.enabled || workers.size === 0 || !this.app.container.hasBinding('ace')) return
    const ace = await this.app.container.make('ace')
    ace.executing(async (command, isMainCommand) => {
      const name = (command.constructor as { commandName?: string }).commandName
      if (!isMainCommand || !name || !workers.has(name) || this.#manager) return
      const manager = await this.app.container.make('atrium.console')
      this.#manager = manager
      await manager.start({ worker: true })
    })
  }

  async shutdown() {
    await this.#manager?.shutdown()
  }
}
