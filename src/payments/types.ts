import type { HttpContext } from '@adonisjs/core/http'
import type { Logger } from '@adonisjs/core/logger'
import type { Database } from '@adonisjs/lucid/database'
import type { EmitterLike } from './processor.ts'

/**
 * The ten canonical event types every driver maps its gateway's events to.
 */
export const WEBHOOK_EVENT_TYPES = [
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'payment.updated',
  'payment.dispute_warning',
  'payment.disputed',
  'payment.dispute_closed',
  'subscription.created',
  'subscription.updated',
  'subscription.canceled',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** Status a payment row can hold */
export type PaymentStatus = 'pending' | 'paid' | 'failed' | 'refunded' | 'disputed'

/** How a closed dispute ended */
export type DisputeOutcome = 'won' | 'lost' | 'expired' | 'canceled'

/** One refund as the gateway identifies it; amounts in minor units */
export interface RefundData {
  /** The gateway's refund id (a cumulative gateway uses `<paymentId>:cumulative`) */
  id: string
  amount: number
}

/**
 * Payload of the payment events. Money is integer minor units (cents).
 */
export interface PaymentWebhookData {
  /** The gateway's id of the charge / payment */
  paymentId: string
  amount?: number
  currency?: string
  status?: PaymentStatus
  paidAt?: string | null
  /** Sum of every refund known for this payment, when the event carries refunds */
  refundedAmount?: number
  /** Refunds carried by this event, keyed by the gateway's refund id */
  refunds?: RefundData[]
  customerId?: string | null
  /** Your own id the gateway echoed back (order id, correlation id, ...) */
  externalReference?: string | null
}

/**
 * Payload of `payment.dispute_warning`, `payment.disputed` and `payment.dispute_closed`.
 */
export interface DisputeWebhookData {
  disputeId: string
  paymentId: string
  amount?: number
  currency?: string
  reason?: string | null
  /** Deadline to answer the dispute (ISO string) */
  actionableUntil?: string | null
  /** Set on `payment.dispute_closed` */
  outcome?: DisputeOutcome
  externalReference?: string | null
}

/**
 * Payload of the subscription events.
 */
export interface SubscriptionWebhookData {
  subscriptionId: string
  customerId?: string | null
  status?: string
  planId?: string | null
  currentPeriodEnd?: string | null
  canceledAt?: string | null
  externalReference?: string | null
}

/**
 * The payload each canonical type carries.
 */
export interface WebhookEventDataMap {
  'payment.succeeded': PaymentWebhookData
  'payment.failed': PaymentWebhookData
  'payment.refunded': PaymentWebhookData
  'payment.updated': PaymentWebhookData
  'payment.dispute_warning': DisputeWebhookData
  'payment.disputed': DisputeWebhookData
  'payment.dispute_closed': DisputeWebhookData
  'subscription.created': SubscriptionWebhookData
  'subscription.updated': SubscriptionWebhookData
  'subscription.canceled': SubscriptionWebhookData
}

/**
 * One normalized gateway event. `data` is unknown until narrowed by `type`;
 * passthrough types keep `data: unknown`.
 */
export interface WebhookEvent<Data = unknown> {
  /** Stable and unique per event: the gateway's id, or one derived from object id, sub-id and status */
  id: string
  /** A canonical type, or a passthrough type (the gateway's own, lowercased) */
  type: WebhookEventType | (string & {})
  data: Data
  /** The gateway's payload for this event (the batch item for Adyen and Efí) */
  raw: unknown
  /** The `:provider` segment the delivery came in on */
  provider: string
  /** When the gateway says the event happened, when it says so */
  occurredAt?: string | null
}

export type WebhookEventFor<T extends WebhookEventType> = WebhookEvent<WebhookEventDataMap[T]> & {
  type: T
}

export type TypedWebhookHandler<T extends WebhookEventType> = (
  event: WebhookEventFor<T>
) => void | Promise<void>

/**
 * A handler function or the object form `defineWebhookHandler` returns.
 */
export type WebhookHandlerFn = (event: WebhookEvent<any>) => void | Promise<void>

/**
 * A handler class: a static `eventType` and an instance `handle(event)`,
 * constructed through the container.
 */
export interface WebhookHandlerClass {
  eventType: string
  new (...args: any[]): { handle(event: WebhookEvent<any>): void | Promise<void> }
}

export interface DefinedWebhookHandler<T extends string = string> {
  (event: WebhookEvent<any>): void | Promise<void>
  type: T
  handle: WebhookHandlerFn
}

export type WebhookHandlerEntry =
  | WebhookHandlerFn
  | DefinedWebhookHandler
  | WebhookHandlerClass
  | (() => Promise<{ default: WebhookHandlerClass | DefinedWebhookHandler }>)

/**
 * What a driver tells the route about the request it verified.
 */
export interface WebhookRequest {
  /** The exact bytes the gateway sent */
  rawBody: Buffer
  /** Lowercased header names */
  headers: Record<string, string | string[] | undefined>
  query: Record<string, string | string[] | undefined>
}

/**
 * `configured`: can verify and has its credential; `unconfigured`: can verify
 * but has nothing set; `unsupported`: the gateway signs nothing.
 */
export type WebhookVerification = 'configured' | 'unconfigured' | 'unsupported'

/**
 * A gateway driver: verifies a delivery against the raw bytes and maps it to
 * canonical events. `parse` throws `E_WEBHOOK_REJECTED` for anything it
 * cannot trust or understand.
 */
export interface PaymentDriver {
  readonly name: string
  /** What the driver can verify with the credentials it was given */
  readonly webhookVerification: WebhookVerification
  /** The config option (and env variable) that holds the credential */
  readonly credentialHint: string
  /** Event names to subscribe to in the gateway's dashboard */
  readonly subscribedEvents: string[]
  parse(request: WebhookRequest, provider: string): WebhookEvent | WebhookEvent[]
  /**
   * An asynchronous check the route runs before `parse`, for gateways whose
   * deliveries are confirmed through their API (InfinitePay's payment check).
   * Throws `E_WEBHOOK_REJECTED` when the gateway does not confirm.
   */
  confirm?(request: WebhookRequest): Promise<void>
}

/**
 * A configured gateway: the driver is imported only when the app boots with it.
 */
export interface GatewayFactory<Options = unknown> {
  driver: string
  options: Options
  /** The option names that hold a credential, for the boot message */
  credentialHint: string
  /** Optional packages the driver imports, checked at boot */
  packages?: string[]
  resolver: () => Promise<PaymentDriver>
}

/**
 * Options of `config/payments.ts`.
 */
export interface PaymentsConfig {
  providers: Record<string, GatewayFactory<any>>
  /** Provider names allowed to mount without a credential, or `true` for all */
  allowUnverifiedWebhooks?: string[] | true
  billing?: {
    handlers?: Partial<Record<string, WebhookHandlerEntry>>
    /** Dotted passthrough names inside `payment.*` / `subscription.*` that handlers may claim */
    passthroughEvents?: string[]
    /** Folder scanned for handler classes, relative to the app root */
    handlersPath?: string
    /** Lucid connection name; the default connection when absent */
    connection?: string
  }
  routes?: {
    enabled?: boolean
    /** Default `/payments/webhook` */
    prefix?: string
    middleware?: any[]
  }
  /** Largest body accepted, in bytes (default 1 MiB) */
  maxBodySize?: number
  /** A delivery still `recorded` after this many ms is claimable again (default 5 minutes) */
  processingLeaseMs?: number
}

export interface ResolvedPaymentsConfig {
  providers: Record<string, GatewayFactory<any>>
  allowUnverifiedWebhooks: string[] | true
  billing: {
    handlers: Partial<Record<string, WebhookHandlerEntry>>
    passthroughEvents: string[]
    handlersPath: string
    connection?: string
  }
  routes: { enabled: boolean; prefix: string; middleware: any[] }
  maxBodySize: number
  processingLeaseMs: number
}

/**
 * What `defineConfig` resolves to once the app has booted: the validated
 * config and the container services the feature uses.
 */
export interface PaymentsRuntime {
  config: ResolvedPaymentsConfig
  db: Database
  emitter: EmitterLike
  logger: Logger
}

/**
 * Outcome of processing one delivery.
 */
export interface DeliveryResult {
  traceId: string
  processed: string[]
  skipped: string[]
  inFlight: string[]
  failed: { id: string; error: string }[]
}

export type { HttpContext }
