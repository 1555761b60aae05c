/**
 * Public API of `adonis-atrium/payments`.
 */
export {
  defineConfig,
  gateways,
  assertVerificationPolicy,
  validatePaymentsConfig,
} from './define_config.ts'
export { WEBHOOK_EVENT_TYPES } from './types.ts'
export { isWebhookEventType, onDiagnostic } from './events.ts'
export type { PaymentsDiagnostics, PaymentsBusinessPayload } from './events.ts'
export { defineWebhookHandler, HandlerRegistry } from './handlers.ts'
export { WebhookProcessor } from './processor.ts'
export { LucidWebhookStore, TABLES as BILLING_TABLES } from './store.ts'
export { registerRoutes } from './routes.ts'
export { toMinorUnits } from './money.ts'
export { findPaymentByExternalReference } from './services.ts'
export * as errors from './errors.ts'
export type * from './types.ts'
export type { WebhookStore, PaymentRow, ClaimResult, LedgerStatus } from './store.ts'
