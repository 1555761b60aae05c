import { onDiagnostic as subscribe, type DiagnosticHandler } from '../shared/diagnostics.ts'
import { WEBHOOK_EVENT_TYPES, type WebhookEventDataMap, type WebhookEventType } from './types.ts'

const CANONICAL = new Set<string>(WEBHOOK_EVENT_TYPES)

/**
 * Narrows a string to one of the ten canonical types.
 */
export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && CANONICAL.has(value)
}

/**
 * True for names inside the library namespace (`payment.*`, `subscription.*`).
 */
export function isLibraryNamespace(type: string) {
  return type.startsWith('payment.') || type.startsWith('subscription.')
}

/**
 * The passthrough type of a gateway event name: lowercased as the gateway spells it.
 */
export function passthroughType(gatewayName: string) {
  return gatewayName.toLowerCase()
}

/** What a payments business event carries: the event's data plus its id, provider and type */
export type PaymentsBusinessPayload<T extends keyof WebhookEventDataMap> =
  WebhookEventDataMap[T] & {
    eventId: string
    provider: string
    type: T
  }

/** Payload of `webhook.received`, `webhook.processed` and `webhook.failed` */
export interface WebhookLifecyclePayload {
  eventId: string
  provider: string
  type: string
  durationMs?: number
  error?: string
}

/** The payload of each payments diagnostic event, by event name */
export type PaymentsDiagnostics = {
  [T in keyof WebhookEventDataMap]: PaymentsBusinessPayload<T>
} & {
  'webhook.received': WebhookLifecyclePayload
  'webhook.processed': WebhookLifecyclePayload
  'webhook.failed': WebhookLifecyclePayload
}

/**
 * `onDiagnostic` typed for payments: `onDiagnostic('payments', 'payment.succeeded', ({ payload }) => payload.amount)`.
 * Other features and passthrough types keep an `unknown` payload.
 */
export function onDiagnostic<E extends keyof PaymentsDiagnostics>(
  feature: 'payments',
  event: E,
  handler: DiagnosticHandler<PaymentsDiagnostics[E]>
): () => void
export function onDiagnostic<Payload = unknown>(
  feature: string,
  event: string,
  handler: DiagnosticHandler<Payload>
): () => void
export function onDiagnostic(feature: string, event: string, handler: DiagnosticHandler<any>) {
  return subscribe(feature, event, handler)
}
