import { publishDiagnostic } from '../shared/diagnostics.ts'
import type { ConsoleAlert } from './alerts/config.ts'
import type { PruneResult } from './stores/contract.ts'

/**
 * What the console publishes on `atrium:console:<event>`, for an app to
 * observe (metrics, audit, its own alerting). Payloads carry no credential,
 * cookie, password or stored content; alerts are redacted as channels get them.
 */
export interface ConsoleEvents {
  /** An alert rule's incident began (once per incident across a fleet) */
  'alert.fired': ConsoleAlert
  /** A notified incident ended (with `alerts.resolved`) */
  'alert.resolved': ConsoleAlert
  /** A prune finished: rows deleted per type, whether the timer ran it, how long it took */
  'prune.completed': { deleted: PruneResult; scheduled: boolean; durationMs: number }
  /** Overload protection paused recording */
  'recorder.paused': { eventLoopLagP99Ms: number; maxEventLoopLagMs: number }
  /** Recording resumed after a pause */
  'recorder.resumed': { eventLoopLagP99Ms: number; pausedMs: number }
  /** The buffer was full: a batch was dropped whole */
  'recorder.dropped': { entries: number; droppedTotal: number }
  /** The store refused a flush: its entries are lost (the error's class and code only) */
  'recorder.write_failed': {
    entries: number
    failedTotal: number
    error: { name: string; code: string | null }
  }
  /** A dashboard session was signed in */
  'session.opened': { mode: 'session' | 'login'; userId: string }
  /** A sign-in was refused by the hook (`rejected`) or the hook threw (`hook_failed`) */
  'session.denied': { mode: 'session' | 'login'; reason: 'rejected' | 'hook_failed'; ip: string }
  /** `authorizeAction` refused a mutation */
  'action.denied': { action: string; userId: string | null; ip: string }
}

export type ConsoleEventName = keyof ConsoleEvents

/** Every event the console publishes, for subscribing to all of them */
export const CONSOLE_EVENTS = [
  'alert.fired',
  'alert.resolved',
  'prune.completed',
  'recorder.paused',
  'recorder.resumed',
  'recorder.dropped',
  'recorder.write_failed',
  'session.opened',
  'session.denied',
  'action.denied',
] as const satisfies readonly ConsoleEventName[]

/** Publishes one console event; with no subscriber it costs a property read */
export function publishConsoleEvent<Event extends ConsoleEventName>(
  event: Event,
  payload: ConsoleEvents[Event]
) {
  publishDiagnostic('console', event, payload)
}
