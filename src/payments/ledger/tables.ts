import type { PaymentStatus } from '../types.ts'

/** The six billing tables, as the published migration stubs name them */
export const TABLES = {
  events: 'billing_webhook_events',
  payments: 'billing_payments',
  subscriptions: 'billing_subscriptions',
  disputes: 'billing_disputes',
  audit: 'billing_audit_events',
  refunds: 'billing_refunds',
} as const

/** Ledger status of an event row */
export type LedgerStatus = 'recorded' | 'processed' | 'failed'

/**
 * `claimed`: this caller runs the event; `processed`: done before, skip;
 * `in_flight`: another delivery holds it right now.
 */
export type ClaimResult = 'claimed' | 'processed' | 'in_flight'

export interface LedgerRow {
  id: number
  provider: string
  event_id: string
  type: string
  status: LedgerStatus
  attempts: number
  raw: string
  normalized: string
  error: string | null
  trace_id: string | null
  locked_until: number | string
}

export interface PaymentRow {
  id: number
  provider: string
  payment_id: string
  status: PaymentStatus
  amount: number
  currency: string | null
  refunded_amount: number
  external_reference?: string | null
  customer_id: string | null
  paid_at: Date | string | null
  /** The gateway's time (epoch ms) of the newest status-bearing event applied */
  last_event_at?: number | string | null
}

/**
 * What billing sync decided: the event type handlers and subscribers see
 * (a `payment.updated` whose refunds complete the charge becomes `payment.refunded`).
 */
export interface SyncOutcome {
  type: string
}

/** Reads money columns (bigint arrives as a string on PostgreSQL and MySQL) as numbers */
export function normalizePayment(row: any): PaymentRow {
  return {
    ...row,
    amount: Number(row.amount),
    refunded_amount: Number(row.refunded_amount),
  }
}
