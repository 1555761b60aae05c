import type { PaymentRow } from '../ledger/tables.ts'
import type { PaymentStatus, PaymentWebhookData, WebhookEvent } from '../types.ts'
import { eventTime, isOlder, newest, toDate } from './event_time.ts'

/**
 * The payment state machine as pure functions: a row and an event
 * in, the row to insert or the changes to write out. Persistence lives in
 * `sync.ts` and the claim writers.
 */

/** A later state never gives way to an earlier one when event times are unknown */
export const PAYMENT_RANK: Record<PaymentStatus, number> = {
  pending: 0,
  failed: 1,
  paid: 2,
  refunded: 3,
  disputed: 4,
}

/** The types that create a payment row when it is absent */
export function createsPayment(type: string) {
  return type === 'payment.succeeded' || type === 'payment.failed' || type === 'payment.refunded'
}

function firstStatus(type: string): PaymentStatus {
  return type === 'payment.succeeded' ? 'paid' : type === 'payment.failed' ? 'failed' : 'refunded'
}

/** The columns of a payment seen for the first time */
export interface NewPayment {
  provider: string
  payment_id: string
  status: PaymentStatus
  amount: number
  currency: string | null
  /** Null: the sum of the refunds recorded before the payment (out of order) */
  refunded_amount: number | null
  customer_id: string | null
  paid_at: Date | null
  external_reference: string | null
  last_event_at: number | null
}

/**
 * The one rule set for a first-seen payment: a whole refund counts the
 * whole charge, a success dates `paid_at` from the gateway (its own date,
 * then the event's, then now). Null for an event that never creates a row.
 */
export function firstSeenPayment(
  event: WebhookEvent<PaymentWebhookData>,
  now: Date
): NewPayment | null {
  if (!createsPayment(event.type)) {
    return null
  }
  const data = event.data
  const status = firstStatus(event.type)
  const amount = data.amount ?? 0
  return {
    provider: event.provider,
    payment_id: data.paymentId,
    status,
    amount,
    currency: data.currency ?? null,
    refunded_amount: status === 'refunded' ? (data.refundedAmount ?? amount) : null,
    customer_id: data.customerId ?? null,
    paid_at: status === 'paid' ? (toDate(data.paidAt) ?? toDate(event.occurredAt) ?? now) : null,
    external_reference: data.externalReference ?? null,
    last_event_at: eventTime(event),
  }
}

/** The changes an event makes to an existing payment row, and the type it is published as */
export interface PaymentTransition {
  changes: Record<string, unknown>
  status: PaymentStatus
  type: string
}

/**
 * Applies an event to a payment row. Cumulative amounts keep their maximum
 * (a late partial refund never lowers a whole one); an event older than the
 * newest applied one fills blanks only; `refundsTotal` is the sum of the
 * payment's refund rows when the event carried refunds.
 */
export function nextPayment(
  row: PaymentRow,
  event: WebhookEvent<PaymentWebhookData>,
  refundsTotal: number | undefined,
  now: Date
): PaymentTransition {
  const data = event.data
  const at = eventTime(event)
  const older = isOlder(at, row.last_event_at)
  const current = row.status
  const amount = data.amount ?? Number(row.amount)
  const changes: Record<string, unknown> = {}
  let next: PaymentStatus = current
  let type = event.type

  if (data.amount !== undefined && Number(row.amount) === 0) changes.amount = data.amount
  if (data.currency && !row.currency) changes.currency = data.currency
  if (data.customerId && !row.customer_id) changes.customer_id = data.customerId
  if (data.externalReference && !row.external_reference) {
    changes.external_reference = data.externalReference
  }
  if (event.type === 'payment.succeeded' && !row.paid_at) {
    changes.paid_at = toDate(data.paidAt) ?? toDate(event.occurredAt) ?? now
  }

  const bearsStatus = event.type !== 'payment.updated' || data.status !== undefined
  if (!older && bearsStatus) {
    switch (event.type) {
      case 'payment.succeeded':
        // A late success never undoes a refund or dispute
        if (PAYMENT_RANK[current] <= PAYMENT_RANK.paid) next = 'paid'
        break
      case 'payment.failed':
        if (current === 'pending') next = 'failed'
        break
      case 'payment.refunded':
        next = 'refunded'
        break
      case 'payment.updated':
        if (current !== 'disputed' && PAYMENT_RANK[data.status!] >= PAYMENT_RANK[current]) {
          next = data.status!
        }
        break
    }
    const last = newest(at, row.last_event_at)
    if (last !== null && last !== Number(row.last_event_at ?? Number.NaN)) {
      changes.last_event_at = last
    }
  }

  // Refunds only grow: keep the largest total any event reported
  const reported = [Number(row.refunded_amount)]
  if (event.type === 'payment.refunded') reported.push(data.refundedAmount ?? amount)
  if (event.type === 'payment.updated' && data.refundedAmount !== undefined) {
    reported.push(data.refundedAmount)
  }
  if (refundsTotal !== undefined) reported.push(refundsTotal)
  const refunded = Math.max(...reported)
  if (refunded !== Number(row.refunded_amount)) changes.refunded_amount = refunded

  if (event.type === 'payment.updated' && next !== 'disputed' && amount > 0 && refunded >= amount) {
    next = 'refunded'
    type = 'payment.refunded'
  }
  if (next !== current) changes.status = next
  return { changes, status: next, type }
}
