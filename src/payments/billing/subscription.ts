import type { SubscriptionWebhookData, WebhookEvent } from '../types.ts'
import { eventTime, isOlder, newest, toDate } from './event_time.ts'

/**
 * The subscription state machine as pure functions. Canceled is final;
 * otherwise the newest event by the gateway's time sets the status, and an
 * older one (delivered late) only fills blanks.
 */

function fields(event: WebhookEvent<SubscriptionWebhookData>, now: Date) {
  const data = event.data
  return {
    customer_id: data.customerId ?? null,
    plan_id: data.planId ?? null,
    current_period_end: toDate(data.currentPeriodEnd),
    canceled_at:
      event.type === 'subscription.canceled'
        ? (toDate(data.canceledAt) ?? toDate(event.occurredAt) ?? now)
        : null,
    external_reference: data.externalReference ?? null,
  }
}

/** The row of a subscription seen for the first time */
export function firstSubscription(event: WebhookEvent<SubscriptionWebhookData>, now: Date) {
  return {
    provider: event.provider,
    subscription_id: event.data.subscriptionId,
    status: event.type === 'subscription.canceled' ? 'canceled' : (event.data.status ?? 'active'),
    ...fields(event, now),
    last_event_at: eventTime(event),
  }
}

/** Changes an event makes to an existing subscription row, or null for none */
export function nextSubscription(
  row: any,
  event: WebhookEvent<SubscriptionWebhookData>,
  now: Date
): Record<string, unknown> | null {
  // Canceled is final: a late update never revives a subscription
  if (row.status === 'canceled') {
    return null
  }
  const at = eventTime(event)
  const carried = Object.entries(fields(event, now)).filter(([, value]) => value !== null)
  const fillOnly =
    event.type === 'subscription.created' ||
    (event.type !== 'subscription.canceled' && isOlder(at, row.last_event_at))
  if (fillOnly) {
    // A creation after the row exists, or an event older than the row's state:
    // fill what the row lacks, change nothing else
    const blanks = carried.filter(([key]) => row[key] === null || row[key] === undefined)
    return blanks.length ? Object.fromEntries(blanks) : null
  }
  const changes: Record<string, unknown> = Object.fromEntries(carried)
  if (event.type === 'subscription.canceled') {
    changes.status = 'canceled'
  } else if (event.type === 'subscription.updated' && event.data.status) {
    changes.status = event.data.status
  }
  const last = newest(at, row.last_event_at)
  if (last !== null) changes.last_event_at = last
  return changes
}
