import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './types.ts'

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
