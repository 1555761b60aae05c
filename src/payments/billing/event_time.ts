import type { WebhookEvent } from '../types.ts'

/** A gateway date string as a Date, null when absent or unreadable */
export function toDate(value: string | null | undefined): Date | null {
  if (!value) {
    return null
  }
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date
}

/** The gateway's time of an event in epoch ms, null when the gateway gives none */
export function eventTime(event: WebhookEvent): number | null {
  return toDate(event.occurredAt)?.getTime() ?? null
}

/**
 * True when the event happened before the newest event already applied to
 * a row: it may still fill blanks and raise cumulative amounts, never change
 * the state. Without both times the state rules alone decide.
 */
export function isOlder(at: number | null, lastEventAt: number | string | null | undefined) {
  return (
    at !== null && lastEventAt !== null && lastEventAt !== undefined && at < Number(lastEventAt)
  )
}

/** The newer of a row's event time and an event's, for `last_event_at` */
export function newest(at: number | null, lastEventAt: number | string | null | undefined) {
  if (lastEventAt === null || lastEventAt === undefined) return at
  return at === null ? Number(lastEventAt) : Math.max(at, Number(lastEventAt))
}
