import { EventEmitter } from 'node:events'
import { publishDiagnostic } from '../shared/diagnostics.ts'
import type { CollabErrorEvent } from './types.ts'

/**
 * Name of the one observability event. Deliberately not `error`: an emitter
 * with no `error` listener would throw.
 */
export const COLLAB_ERROR_EVENT = 'collab:error'

/**
 * Emitter of collaboration observability events.
 */
export const collaborationEvents = new EventEmitter()
collaborationEvents.setMaxListeners(0)

/**
 * Anything with an `error(object, message)` method: the Adonis logger fits.
 */
export interface CollaborationLogger {
  error(payload: unknown, message?: string): void
  warn?(message: string): void
}

let logger: CollaborationLogger | undefined

/**
 * Routes reported errors to a logger (the provider sets the app logger);
 * `undefined` removes it.
 */
export function setCollaborationLogger(next: CollaborationLogger | undefined) {
  logger = next
}

/**
 * Subscribes to reported errors; returns the unsubscribe.
 */
export function onCollaborationError(listener: (event: CollabErrorEvent) => void): () => void {
  collaborationEvents.on(COLLAB_ERROR_EVENT, listener)
  return () => {
    collaborationEvents.off(COLLAB_ERROR_EVENT, listener)
  }
}

/**
 * Reports a storage or authorize failure. Never throws: with neither logger
 * nor listener the event reaches the error console.
 */
export function reportCollaborationError(event: CollabErrorEvent): void {
  try {
    // the message only: an error's properties may carry what was being stored
    publishDiagnostic('collaboration', `${event.scope}.failed`, {
      operation: event.operation,
      docName: event.docName ?? null,
      message: event.error instanceof Error ? event.error.message : String(event.error),
    })
    const listeners = collaborationEvents.listenerCount(COLLAB_ERROR_EVENT)
    if (listeners > 0) {
      collaborationEvents.emit(COLLAB_ERROR_EVENT, event)
    }
    const message = `collaboration ${event.scope} failure during ${event.operation}${event.docName ? ` on "${event.docName}"` : ''}`
    if (logger) {
      logger.error({ err: event.error, scope: event.scope, docName: event.docName }, message)
    } else if (listeners === 0) {
      console.error(`[atrium] ${message}`, event.error)
    }
  } catch {
    // a listener that throws must not break the code path that reported
  }
}

/**
 * A boot-time warning about the configuration: through the logger when one
 * is set, else the console.
 */
export function warnCollaboration(message: string): void {
  if (logger?.warn) {
    logger.warn(message)
  } else {
    console.warn(`[atrium] ${message}`)
  }
}
