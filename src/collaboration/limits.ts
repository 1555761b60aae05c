import { CollabConfigError } from './errors.ts'

/**
 * Caps on what one WebSocket client can make the server hold or do. Every
 * buffer or batch a client can grow has one; a client that passes a cap is
 * closed with a documented close code (see `CLOSE_CODES`).
 */
export interface CollaborationLimits {
  /** Largest WebSocket message accepted, in bytes; a larger one closes with 1009 */
  maxPayload: number
  /** Largest document state accepted from clients, in bytes; an update past it closes with 4413 */
  maxDocumentBytes: number
  /** Messages a connection may send per second, sustained (token bucket refill) */
  messagesPerSecond: number
  /** Messages a connection may send in a burst (token bucket size) */
  messageBurst: number
  /** Awareness client ids one connection may own */
  maxAwarenessClients: number
  /** Largest awareness state (its JSON) of one client id, in bytes */
  maxAwarenessStateBytes: number
  /** Awareness queries a connection may send per second, sustained */
  awarenessQueriesPerSecond: number
  /** Bytes queued for a socket before it is closed as a slow consumer (4408) */
  maxBufferedBytes: number
  /** Longest `authorize` may take at the handshake before the socket closes with 4503 */
  authorizeTimeoutMs: number
  /**
   * After a connection is closed for breaking a limit (4429, 4413), how long
   * the same user's new upgrades are refused with HTTP 429, before any frame
   */
  abuseCooldownMs: number
}

const MiB = 1024 * 1024

/**
 * Defaults sized so a large real document (a few MiB of Yjs state) still
 * syncs in one message, while a hostile client holds little: see
 * docs/collaboration.md, "Limits and close codes".
 */
export const DEFAULT_LIMITS: Readonly<CollaborationLimits> = Object.freeze({
  maxPayload: 16 * MiB,
  maxDocumentBytes: 8 * MiB,
  messagesPerSecond: 200,
  messageBurst: 1000,
  maxAwarenessClients: 8,
  maxAwarenessStateBytes: 16 * 1024,
  awarenessQueriesPerSecond: 2,
  maxBufferedBytes: 32 * MiB,
  authorizeTimeoutMs: 10_000,
  abuseCooldownMs: 10_000,
})

const KEYS = Object.keys(DEFAULT_LIMITS) as (keyof CollaborationLimits)[]

/**
 * Validates `limits` of config/collaboration.ts and fills in the defaults.
 * Throws a config error naming `limits.<key>` and the fix.
 */
export function resolveLimits(input?: Partial<CollaborationLimits>): CollaborationLimits {
  if (input === undefined) {
    return { ...DEFAULT_LIMITS }
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new CollabConfigError(
      `Invalid "limits" in config/collaboration.ts: expected an object such as { maxPayload: ${DEFAULT_LIMITS.maxPayload} }, received ${JSON.stringify(input)}`
    )
  }
  const limits = { ...DEFAULT_LIMITS }
  for (const [key, value] of Object.entries(input)) {
    if (!KEYS.includes(key as keyof CollaborationLimits)) {
      throw new CollabConfigError(
        `Unknown "limits.${key}" in config/collaboration.ts. Remove it or use one of ${KEYS.join(', ')}`
      )
    }
    if (value === undefined) {
      continue
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new CollabConfigError(
        `Invalid "limits.${key}" in config/collaboration.ts: expected a positive number, received ${JSON.stringify(value)}. Remove it to use the default (${DEFAULT_LIMITS[key as keyof CollaborationLimits]})`
      )
    }
    limits[key as keyof CollaborationLimits] = value
  }
  if (limits.messageBurst < limits.messagesPerSecond) {
    throw new CollabConfigError(
      `Invalid "limits.messageBurst" in config/collaboration.ts: ${limits.messageBurst} is below limits.messagesPerSecond (${limits.messagesPerSecond}). Set it to at least ${limits.messagesPerSecond}`
    )
  }
  return limits
}
