import type { ApplicationService } from '@adonisjs/core/types'
import type { PaymentsManager } from '../src/payments/manager.ts'
import type { PaymentsRuntime, WebhookEventDataMap } from '../src/payments/types.ts'

/**
 * What an `atrium:payments:<type>` emitter event carries: the event's data
 * plus its id, provider and the delivery's trace id.
 */
export type PaymentsBusinessEvent<T extends keyof WebhookEventDataMap> = WebhookEventDataMap[T] & {
  eventId: string
  provider: string
  type: T
  traceId: string
}

/** Lifecycle payload of `webhook.received`, `webhook.processed` and `webhook.failed` */
export interface WebhookLifecycleEvent {
  eventId: string
  provider: string
  type: string
  traceId: string
  durationMs?: number
  error?: string
}

export type PaymentsEventsList = {
  [T in keyof WebhookEventDataMap as `atrium:payments:${T}`]: PaymentsBusinessEvent<T>
} & {
  'atrium:payments:webhook.received': WebhookLifecycleEvent
  'atrium:payments:webhook.processed': WebhookLifecycleEvent
  'atrium:payments:webhook.failed': WebhookLifecycleEvent
}

declare module '@adonisjs/core/types' {
  interface ContainerBindings {
    'atrium.payments': PaymentsManager
  }
  interface EventsList extends PaymentsEventsList {}
}

/**
 * Registers the payments manager and mounts `POST /payments/webhook/:provider`.
 * Drivers, the Stripe SDK and the Lucid store load only when the app boots
 * with payments configured. The verification policy and the optional
 * packages are enforced where webhooks are served (`web`, `test`); Ace
 * commands boot with a warning so `migration:run` works before credentials.
 */
export default class PaymentsProvider {
  #runtime?: Promise<PaymentsRuntime>

  constructor(protected app: ApplicationService) {}

  /** Resolves `config/payments.ts` once, with its container services */
  #resolve(): Promise<PaymentsRuntime> {
    this.#runtime ??= (async () => {
      const { PaymentsConfigException } = await import('../src/payments/errors.ts')
      const raw = this.app.config.get<unknown>('payments')
      if (!raw) {
        throw new PaymentsConfigException(
          'Missing config/payments.ts. Run "node ace configure adonis-atrium --features=payments" or create it with defineConfig from adonis-atrium/payments'
        )
      }
      const { configProvider } = await import('@adonisjs/core')
      const runtime = await configProvider.resolve<PaymentsRuntime>(this.app, raw)
      if (!runtime || !runtime.config?.providers) {
        throw new PaymentsConfigException(
          'Invalid config/payments.ts: export default defineConfig({...}) from adonis-atrium/payments'
        )
      }
      return runtime
    })()
    return this.#runtime
  }

  register() {
    this.app.container.singleton('atrium.payments', async () => {
      const { PaymentsManager } = await import('../src/payments/manager.ts')
      return new PaymentsManager(this.app, await this.#resolve())
    })
  }

  async boot() {
    const runtime = await this.#resolve()
    const { config } = runtime
    const environment = this.app.getEnvironment()
    const serves = environment === 'web' || environment === 'test'

    const { verificationProblems } = await import('../src/payments/define_config.ts')
    const { PaymentsConfigException } = await import('../src/payments/errors.ts')
    const { assertPackagesInstalled } = await import('../src/shared/optional_import.ts')
    const problems = verificationProblems(config)
    for (const [name, factory] of Object.entries(config.providers)) {
      try {
        assertPackagesInstalled(
          factory.packages ?? [],
          `The "${name}" gateway in config/payments.ts`
        )
      } catch (error) {
        if (serves) throw error
        problems.push((error as Error).message)
      }
    }
    if (serves && problems.length) {
      throw new PaymentsConfigException(problems[0])
    }
    for (const problem of problems) {
      // Ace commands (migrations, generators) still run; the server will refuse to start
      runtime.logger.warn(problem)
    }

    if (!serves) {
      return
    }
    const { createRawBodyMiddleware } = await import('../src/payments/raw_body.ts')
    const server = await this.app.container.make('server')
    const middleware = createRawBodyMiddleware(config.routes.prefix, config.maxBodySize)
    server.use([async () => ({ default: middleware })])

    if (config.routes.enabled) {
      const { registerRoutes } = await import('../src/payments/routes.ts')
      registerRoutes(await this.app.container.make('router'), config)
    }

    const manager = await this.app.container.make('atrium.payments')
    await manager.init()
  }
}
