import type { PaymentRow } from '../ledger/tables.ts'
import type { DisputeWebhookData, PaymentStatus, WebhookEvent } from '../types.ts'
import { eventTime, isOlder, newest, toDate } from './event_time.ts'

/**
 * The dispute state machine as pure functions: the dispute row itself
 * (warning, open, closed: never backwards) and its effect on the payment.
 */

const DISPUTE_RANK: Record<string, number> = { warning: 0, open: 1, closed: 2 }

export function disputeStatus(type: string) {
  return type === 'payment.dispute_warning'
    ? 'warning'
    : type === 'payment.disputed'
      ? 'open'
      : 'closed'
}

function fields(data: DisputeWebhookData) {
  return {
    payment_id: data.paymentId,
    amount: data.amount ?? null,
    currency: data.currency ?? null,
    reason: data.reason ?? null,
    actionable_until: toDate(data.actionableUntil),
  }
}

/** The dispute row of a dispute seen for the first time */
export function firstDispute(event: WebhookEvent<DisputeWebhookData>) {
  return {
    provider: event.provider,
    dispute_id: event.data.disputeId,
    ...fields(event.data),
    status: disputeStatus(event.type),
    outcome: event.data.outcome ?? null,
  }
}

/**
 * Changes to an existing dispute row, or null: a dispute never moves back
 * (closed stays closed), and the fields an event carries replace the row's
 * only when the event is not older than the row's state.
 */
export function nextDispute(row: any, event: WebhookEvent<DisputeWebhookData>) {
  const status = disputeStatus(event.type)
  if (DISPUTE_RANK[status] < DISPUTE_RANK[row.status]) {
    return null
  }
  const carried = Object.entries(fields(event.data)).filter(([, value]) => value !== null)
  return {
    ...Object.fromEntries(carried),
    status,
    outcome: event.data.outcome ?? row.outcome ?? null,
  }
}

/**
 * The payment's changes after a dispute event, or null for none: opened
 * disputes the payment; closed as won restores paid; closed otherwise
 * (lost, expired, canceled) leaves it disputed, revenue not restored. An
 * event older than the payment's newest state changes nothing, and a newer
 * one moves `last_event_at` even when the status stays, so the dispute's
 * own earlier events, delivered late, cannot undo its close.
 */
export function paymentAfterDispute(
  payment: PaymentRow,
  event: WebhookEvent<DisputeWebhookData>
): Record<string, unknown> | null {
  const at = eventTime(event)
  if (event.type === 'payment.dispute_warning' || isOlder(at, payment.last_event_at)) {
    return null
  }
  let next: PaymentStatus = payment.status
  if (event.type === 'payment.disputed') {
    next = 'disputed'
  } else if (event.data.outcome === 'won') {
    if (payment.status === 'disputed') next = 'paid'
  } else {
    next = 'disputed'
  }
  const changes: Record<string, unknown> = {}
  if (next !== payment.status) changes.status = next
  const last = newest(at, payment.last_event_at)
  if (last !== null && last !== Number(payment.last_event_at ?? Number.NaN)) {
    changes.last_event_at = last
  }
  return Object.keys(changes).length ? changes : null
}
