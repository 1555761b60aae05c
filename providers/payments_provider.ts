import type { ApplicationService } from '@adonisjs/core/types'
import type { PaymentsManager } from '../src/payments/manager.ts'
import type { ResolvedPaymentsConfig, WebhookEventDataMap } from '../src/payments/types.ts'

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
    'atrium.payments.config': ResolvedPaymentsConfig
  }
  interface EventsList extends PaymentsEventsList {}
}

/**
 * Registers the payments manager and mounts `POST /payments/webhook/:provider`.
 * Drivers, the Stripe SDK and the Lucid store load only when the app boots
 * with payments configured.
 */
export default class PaymentsProvider {
  constructor(protected app: ApplicationService) {}

  #config(): ResolvedPaymentsConfig {
    const config = this.app.config.get<ResolvedPaymentsConfig | undefined>('payments')
    if (!config || !config.providers) {
      throw new Error(
        'Missing config/payments.ts. Run "node ace configure adonis-atrium --features=payments" or create it with defineConfig from adonis-atrium/payments'
      )
    }
    return config
  }

  register() {
    this.app.container.singleton('atrium.payments.config', () => this.#config())
    this.app.container.singleton('atrium.payments', async (resolver) => {
      const { PaymentsManager } = await import('../src/payments/manager.ts')
      const db = await resolver.make('lucid.db')
      const emitter = await resolver.make('emitter')
      return new PaymentsManager(this.app, this.#config(), db, emitter)
    })
  }

  async boot() {
    const config = this.#config()
    const { assertVerificationPolicy } = await import('../src/payments/define_config.ts')
    assertVerificationPolicy(config)

    const { createRawBodyMiddleware } = await import('../src/payments/raw_body.ts')
    const server = await this.app.container.make('server')
    const middleware = createRawBodyMiddleware(config.routes.prefix, config.maxBodySize)
    server.use([async () => ({ default: middleware })])

    if (config.routes.enabled) {
      const { registerRoutes } = await import('../src/payments/routes.ts')
      registerRoutes(await this.app.container.make('router'), config)
    }

    const environment = this.app.getEnvironment()
    if (environment === 'web' || environment === 'test') {
      const manager = await this.app.container.make('atrium.payments')
      await manager.init()
    }
  }
}
