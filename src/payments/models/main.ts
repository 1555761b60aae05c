/**
 * Lucid models over the billing tables (`adonis-atrium/payments/models`).
 */
export { default as BillingWebhookEvent } from './billing_webhook_event.ts'
export { default as BillingPayment } from './billing_payment.ts'
export { default as BillingRefund } from './billing_refund.ts'
export { default as BillingDispute } from './billing_dispute.ts'
export { default as BillingSubscription } from './billing_subscription.ts'
export { default as BillingAuditEvent } from './billing_audit_event.ts'
