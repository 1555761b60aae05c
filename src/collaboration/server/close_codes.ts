/**
 * WebSocket close codes the collaboration server sends. A refused handshake
 * never reaches WebSocket: it is answered over HTTP (400, 401, 404, 500, 503).
 * ws itself closes with 1009 for a message over `limits.maxPayload` and 1002
 * for a frame that breaks the protocol (an unmasked client frame, say).
 */
export const CLOSE_CODES = {
  /** Kept for clients that test it: tokens are now refused with HTTP 401 before the upgrade */
  invalidToken: 4401,
  /** `authorize` denied reading: final */
  forbidden: 4003,
  /** `authorize` threw: retryable */
  authorizationFailed: 4503,
  /** The document's engine is not served by this socket */
  unsupportedEngine: 4400,
  /** A message the protocol cannot decode */
  malformed: 4400,
  /** More messages (or awareness queries) than `limits.messagesPerSecond` allows */
  rateLimited: 4429,
  /** An update past `limits.maxDocumentBytes`, an awareness state past its caps */
  tooLarge: 4413,
  /** The client did not read: more than `limits.maxBufferedBytes` queued for it */
  slowConsumer: 4408,
  /** The server failed (document load, handshake): retryable */
  internalError: 4500,
  /** The server is shutting down: reconnect, to another instance if there is one */
  goingAway: 1001,
} as const
