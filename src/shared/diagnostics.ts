import diagnosticsChannel from 'node:diagnostics_channel'
import { debuglog } from 'node:util'

const debug = debuglog('atrium:diagnostics')

/**
 * What a subscriber of `atrium:<feature>:<event>` receives.
 */
export interface DiagnosticMessage<Payload = unknown> {
  feature: string
  event: string
  payload: Payload
  /** Shared by every message published for one unit of work (a webhook delivery, a run) */
  traceId?: string
}

export type DiagnosticHandler<Payload = unknown> = (
  message: DiagnosticMessage<Payload>
) => void | Promise<void>

/**
 * The `node:diagnostics_channel` name of one feature event: `atrium:<feature>:<event>`.
 */
export function diagnosticChannelName(feature: string, event: string) {
  return `atrium:${feature}:${event}`
}

/**
 * Publishes a message on `atrium:<feature>:<event>`. Publishing with no
 * subscriber costs one property read, so features publish unconditionally.
 */
export function publishDiagnostic<Payload>(
  feature: string,
  event: string,
  payload: Payload,
  traceId?: string
) {
  const channel = diagnosticsChannel.channel(diagnosticChannelName(feature, event))
  if (!channel.hasSubscribers) {
    return
  }
  const message: DiagnosticMessage<Payload> = { feature, event, payload, traceId }
  channel.publish(message)
}

/**
 * Subscribes to `atrium:<feature>:<event>` and returns the unsubscribe.
 * Subscribers are fire-and-forget: a throw or a rejected promise is logged
 * under `NODE_DEBUG=atrium:diagnostics` and never reaches the publisher
 * (node would otherwise rethrow it as an uncaught exception).
 */
export function onDiagnostic<Payload = unknown>(
  feature: string,
  event: string,
  handler: DiagnosticHandler<Payload>
): () => void {
  const name = diagnosticChannelName(feature, event)
  const listener = (message: unknown) => {
    try {
      const result = handler(message as DiagnosticMessage<Payload>)
      if (result && typeof (result as Promise<void>).catch === 'function') {
        ;(result as Promise<void>).catch((error) =>
          debug('subscriber of %s failed: %O', name, error)
        )
      }
    } catch (error) {
      debug('subscriber of %s failed: %O', name, error)
    }
  }
  diagnosticsChannel.subscribe(name, listener)
  return () => {
    diagnosticsChannel.unsubscribe(name, listener)
  }
}
