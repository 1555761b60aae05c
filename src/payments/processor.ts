import { randomUUID } from 'node:crypto'
import { publishDiagnostic } from '../shared/diagnostics.ts'
import debug from './debug.ts'
import { WebhookRejectedException } from './errors.ts'
import { HandlerRegistry } from './handlers.ts'
import type {
  DeliveryResult,
  PaymentDriver,
  WebhookEvent,
  WebhookHandlerEntry,
  WebhookRequest,
} from './types.ts'
import type { WebhookStore } from './store.ts'

/** The part of the Adonis emitter the processor uses */
export interface EmitterLike {
  emit(event: any, data: any): Promise<any> | any
}

export interface WebhookProcessorOptions {
  store: WebhookStore
  driver: PaymentDriver
  handlers?: HandlerRegistry | Partial<Record<string, WebhookHandlerEntry>>
  /** The `:provider` name events are recorded under (default: the driver's name) */
  provider?: string
  emitter?: EmitterLike
  passthroughEvents?: string[]
}

export type EventOutcome = 'processed' | 'skipped' | 'in_flight' | 'failed'

/**
 * Verifies, records and processes deliveries of one provider: the route's
 * engine, and the escape hatch for hosts with their own controller.
 */
export class WebhookProcessor {
  readonly store: WebhookStore
  readonly driver: PaymentDriver
  readonly provider: string
  readonly handlers: HandlerRegistry
  #emitter?: EmitterLike

  constructor(options: WebhookProcessorOptions) {
    this.store = options.store
    this.driver = options.driver
    this.provider = options.provider ?? options.driver.name
    this.handlers = HandlerRegistry.from(options.handlers, options.passthroughEvents)
    this.#emitter = options.emitter
  }

  /**
   * Verifies and parses a delivery; anything the driver throws is a rejection.
   */
  parse(request: WebhookRequest): WebhookEvent[] {
    try {
      const parsed = this.driver.parse(request, this.provider)
      const events = Array.isArray(parsed) ? parsed : [parsed]
      if (events.length === 0) {
        throw new WebhookRejectedException('delivery carries no event', this.provider)
      }
      return events
    } catch (error) {
      if (error instanceof WebhookRejectedException) {
        error.provider = this.provider
        throw error
      }
      debug('driver %s could not parse a delivery: %s', this.provider, (error as Error)?.message)
      throw new WebhookRejectedException('delivery could not be parsed', this.provider)
    }
  }

  /**
   * Processes every event of a verified delivery; siblings still run when one fails.
   */
  async handle(request: WebhookRequest, traceId: string = randomUUID()): Promise<DeliveryResult> {
    // Drivers that must ask the gateway first (InfinitePay's payment check, PagBank's key) do it here
    await this.driver.confirm?.(request)
    const events = this.parse(request)
    const result: DeliveryResult = { traceId, processed: [], skipped: [], inFlight: [], failed: [] }
    // A one-event delivery keeps the gateway's exact text as its raw payload
    const rawText = events.length === 1 ? request.rawBody.toString('utf8') : undefined
    for (const event of events) {
      const outcome = await this.processEvent(event, traceId, rawText)
      if (outcome.status === 'processed') result.processed.push(event.id)
      else if (outcome.status === 'skipped') result.skipped.push(event.id)
      else if (outcome.status === 'in_flight') result.inFlight.push(event.id)
      else result.failed.push({ id: event.id, error: outcome.error! })
    }
    return result
  }

  /**
   * Runs one event: claim in the ledger, billing sync, handler, mark processed.
   * A processed event returns `skipped` without reaching the handler.
   */
  async processEvent(
    event: WebhookEvent,
    traceId: string = randomUUID(),
    rawText?: string
  ): Promise<{ status: EventOutcome; error?: string }> {
    const claim = await this.store.claim(event, traceId, rawText)
    if (claim === 'processed') {
      debug('event %s/%s already processed, skipped', event.provider, event.id)
      return { status: 'skipped' }
    }
    if (claim === 'in_flight') {
      debug('event %s/%s is being processed by another delivery', event.provider, event.id)
      return { status: 'in_flight' }
    }
    const started = performance.now()
    const lifecycle = { eventId: event.id, provider: event.provider, type: event.type, traceId }
    this.#publish('webhook.received', lifecycle, traceId)
    try {
      const { type } = await this.store.sync(event)
      const effective = type === event.type ? event : { ...event, type }
      const handler = this.handlers.get(effective.type)
      if (handler) {
        await handler(effective)
      }
      await this.store.markProcessed(effective)
      this.#publish(
        effective.type,
        {
          ...(effective.data as object),
          eventId: event.id,
          provider: event.provider,
          type: effective.type,
        },
        traceId
      )
      this.#publish(
        'webhook.processed',
        { ...lifecycle, type: effective.type, durationMs: performance.now() - started },
        traceId
      )
      return { status: 'processed' }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      debug('event %s/%s failed: %s', event.provider, event.id, message)
      await this.store.markFailed(event, error)
      this.#publish('webhook.failed', { ...lifecycle, error: message }, traceId)
      return { status: 'failed', error: message }
    }
  }

  /**
   * Diagnostics channel and Adonis emitter; subscribers are fire-and-forget.
   */
  #publish(name: string, payload: Record<string, unknown>, traceId: string) {
    publishDiagnostic('payments', name, payload, traceId)
    if (this.#emitter) {
      try {
        const pending = this.#emitter.emit(`atrium:payments:${name}`, { ...payload, traceId })
        if (pending && typeof pending.catch === 'function') {
          pending.catch((error: Error) => debug('listener of %s failed: %s', name, error?.message))
        }
      } catch (error) {
        debug('listener of %s failed: %s', name, (error as Error)?.message)
      }
    }
  }
}
