import { randomUUID } from 'node:crypto'
import type { ApplicationService } from '@adonisjs/core/types'
import type { HttpContext } from '@adonisjs/core/http'
import type { Logger } from '@adonisjs/core/logger'
import debug from './debug.ts'
import { WebhookRejectedException, WebhookTooLargeException } from './errors.ts'
import { HandlerRegistry } from './handlers.ts'
import { WebhookProcessor, type EmitterLike } from './processor.ts'
import { capturedRawBody, readBody } from './raw_body.ts'
import { LucidWebhookStore, type LedgerRow } from './store.ts'
import type {
  PaymentDriver,
  PaymentsRuntime,
  ResolvedPaymentsConfig,
  WebhookEvent,
} from './types.ts'

/**
 * The booted payments feature: one processor per configured provider, the
 * store, the handlers, and the HTTP entry point of the webhook route.
 */
export class PaymentsManager {
  readonly config: ResolvedPaymentsConfig
  readonly store: LucidWebhookStore
  readonly handlers: HandlerRegistry
  readonly processors = new Map<string, WebhookProcessor>()
  readonly drivers = new Map<string, PaymentDriver>()
  readonly logger: Logger
  #app: ApplicationService
  #emitter?: EmitterLike
  #initialized?: Promise<void>

  constructor(app: ApplicationService, { config, db, emitter, logger }: PaymentsRuntime) {
    this.#app = app
    this.config = config
    this.#emitter = emitter
    this.logger = logger
    this.store = new LucidWebhookStore(db, {
      connection: config.billing.connection,
      processingLeaseMs: config.processingLeaseMs,
    })
    this.handlers = new HandlerRegistry({
      passthroughEvents: config.billing.passthroughEvents,
      resolveClass: (Handler) => app.container.make(Handler as any),
    })
  }

  /**
   * Loads the configured drivers, the handlers (config, then folder) and
   * checks the billing tables match the published migrations. Idempotent.
   */
  init(options: { schema?: boolean } = {}) {
    this.#initialized ??= (async () => {
      for (const [name, factory] of Object.entries(this.config.providers)) {
        const driver = await factory.resolver()
        this.drivers.set(name, driver)
        this.processors.set(
          name,
          new WebhookProcessor({
            store: this.store,
            driver,
            provider: name,
            handlers: this.handlers,
            emitter: this.#emitter,
          })
        )
      }
      await this.handlers.addConfig(this.config.billing.handlers)
      await this.handlers.addFolder(
        this.#app.makePath(this.config.billing.handlersPath),
        this.config.billing.handlersPath
      )
      if (options.schema !== false) {
        // A database not reachable (or not migrated) yet at boot is checked again on first use
        await this.store
          .ensureSchema()
          .catch((error) => this.logger.warn('adonis-atrium/payments: %s', error?.message))
      }
      debug('payments ready: %s', [...this.processors.keys()].join(', '))
    })()
    return this.#initialized
  }

  processor(provider: string) {
    return this.processors.get(provider)
  }

  async findPaymentByExternalReference(reference: string) {
    return this.store.findPaymentByExternalReference(reference)
  }

  /**
   * The webhook route: raw bytes in, `{ received: true }` out. Rejections
   * are thrown: `WebhookRejectedException#handle()` renders the 400.
   */
  async handleHttp(ctx: HttpContext) {
    await this.init()
    const provider = String(ctx.params.provider ?? '')
    const traceId = randomUUID()
    const processor = this.processors.get(provider)
    let result
    try {
      if (!processor) {
        throw new WebhookRejectedException(`unknown provider "${provider.slice(0, 64)}"`)
      }
      const request = {
        rawBody: await this.#rawBody(ctx),
        headers: ctx.request.headers(),
        query: ctx.request.qs(),
      }
      result = await processor.handle(request, traceId)
    } catch (error) {
      if (error instanceof WebhookRejectedException) {
        error.provider ??= provider
        await this.store
          .audit({ provider, type: 'webhook.rejected', reason: error.message, traceId })
          .catch((auditError) => debug('could not write webhook.rejected: %s', auditError?.message))
      }
      throw error
    }
    if (result.failed.length) {
      return ctx.response.status(500).send({
        received: true,
        processed: result.processed.length,
        failed: result.failed.map(({ id }) => id),
        error: result.failed.map(({ id, error }) => `${id}: ${error}`).join('; '),
      })
    }
    if (result.inFlight.length) {
      return ctx.response.status(409).send({
        received: true,
        processed: result.processed.length,
        inFlight: result.inFlight,
        error: `event ${result.inFlight.join(', ')} is still being processed by an earlier delivery; retry later`,
      })
    }
    return ctx.response.status(200).send({ received: true })
  }

  async #rawBody(ctx: HttpContext): Promise<Buffer> {
    const captured = capturedRawBody(ctx)
    if (captured) {
      return captured
    }
    const raw = ctx.request.raw()
    if (raw !== null) {
      // The bodyparser read it first (the raw-body middleware was removed): its UTF-8 text
      return Buffer.from(raw, 'utf8')
    }
    const request = ctx.request.request
    if (request.readableEnded) {
      return Buffer.alloc(0)
    }
    const body = await readBody(request, this.config.maxBodySize)
    if (body === 'too_large') {
      throw new WebhookTooLargeException(
        `body is larger than maxBodySize (${this.config.maxBodySize})`
      )
    }
    return body
  }

  /**
   * Re-runs stored, already verified events (`payments:webhooks:replay`).
   * An event already processed runs its handler again only with `force`.
   */
  async replay(filter: { failed?: boolean; eventId?: string; provider?: string; force?: boolean }) {
    await this.init()
    const rows = await this.store.listEvents({
      status: filter.failed ? 'failed' : undefined,
      eventId: filter.eventId,
      provider: filter.provider,
    })
    const outcomes: { row: LedgerRow; status: string; error?: string }[] = []
    for (const row of rows) {
      const processor = this.processors.get(row.provider)
      if (!processor) {
        outcomes.push({
          row,
          status: 'skipped',
          error: `provider "${row.provider}" is not configured`,
        })
        continue
      }
      if (row.status === 'processed' && !filter.force) {
        outcomes.push({
          row,
          status: 'skipped',
          error: 'already processed; pass --force to run its handler again',
        })
        continue
      }
      const event: WebhookEvent = { ...JSON.parse(row.normalized), raw: JSON.parse(row.raw) }
      await this.store.release(row.provider, row.event_id)
      const outcome = await processor.processEvent(event, randomUUID())
      outcomes.push({ row, ...outcome })
    }
    return outcomes
  }
}
