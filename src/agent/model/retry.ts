/**
 * Retries of a model call, owned by the gateway so each one is counted. A
 * call is retried only when the provider failed before streaming anything
 * and said the failure is worth retrying (`isRetryable`, which the AI SDK
 * sets on 408, 409, 429, 5xx and refused connections; a custom `ModelPort`
 * can throw such an error too).
 */
import type { ModelPort, ModelStepEvent, ModelStepRequest } from './port.ts'

/** The first wait; each retry doubles it (the AI SDK's own schedule) */
const INITIAL_DELAY_MS = 2000
const BACKOFF_FACTOR = 2
/** A provider's Retry-After longer than this is not waited for: the backoff is */
const MAX_RETRY_AFTER_MS = 60_000

interface RetryableError {
  isRetryable?: boolean
  responseHeaders?: Record<string, string>
  cause?: unknown
  lastError?: unknown
}

/** The error (or the one it wraps) that says it may be retried, or null */
function retryableCause(error: unknown): RetryableError | null {
  let current = error as RetryableError | undefined
  for (let depth = 0; current && typeof current === 'object' && depth < 4; depth++) {
    if (current.isRetryable === true) return current
    current = (current.lastError ?? current.cause) as RetryableError | undefined
  }
  return null
}

export function isRetryable(error: unknown) {
  return retryableCause(error) !== null
}

/** The wait before retry `attempt` (0-based): the provider's Retry-After when sensible, else the backoff */
export function retryDelayMs(error: unknown, attempt: number) {
  const backoff = INITIAL_DELAY_MS * BACKOFF_FACTOR ** attempt
  const headers = retryableCause(error)?.responseHeaders
  if (!headers) return backoff
  let ms: number | undefined
  const retryAfterMs = Number.parseFloat(headers['retry-after-ms'] ?? '')
  if (!Number.isNaN(retryAfterMs)) ms = retryAfterMs
  const retryAfter = headers['retry-after']
  if (ms === undefined && retryAfter) {
    const seconds = Number.parseFloat(retryAfter)
    ms = Number.isNaN(seconds) ? Date.parse(retryAfter) - Date.now() : seconds * 1000
  }
  return ms !== undefined && ms >= 0 && ms <= MAX_RETRY_AFTER_MS ? ms : backoff
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts */
export function waitUnlessAborted(ms: number, signal: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Streams one model call, sending it again (up to `maxRetries` times) when
 * it failed retryably before yielding anything. Every event goes to
 * `onEvent`; `onRetry` is told each time the call is sent again. Throws the
 * last failure, or the signal's reason on abort.
 */
export async function streamWithRetries(
  model: ModelPort,
  request: ModelStepRequest,
  options: {
    maxRetries: number
    onEvent(event: ModelStepEvent): void
    onRetry(attempt: number): void
  }
) {
  let streamed = false
  for (let attempt = 0; ; attempt++) {
    try {
      for await (const event of model.streamStep(request)) {
        streamed = true
        options.onEvent(event)
      }
      return
    } catch (error) {
      // Only a call that streamed nothing can be sent again: the reader saw no part of it
      const retry =
        !streamed && !request.signal.aborted && attempt < options.maxRetries && isRetryable(error)
      if (!retry) throw error
      await waitUnlessAborted(retryDelayMs(error, attempt), request.signal)
      options.onRetry(attempt + 1)
    }
  }
}
