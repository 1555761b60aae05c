import { onDiagnostic, type DiagnosticMessage } from '../../shared/diagnostics.ts'
import { WEBHOOK_EVENT_TYPES } from '../../payments/types.ts'
import { AGENT_DIAGNOSTIC_EVENTS } from '../../agent/diagnostics.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

/**
 * The `atrium:<feature>:<event>` channels Atrium's features publish: payment
 * webhook deliveries (their lifecycle and the business events they produce),
 * collaboration connections and failures, and agent runs, tool calls and usage.
 */
export const FEATURE_CHANNELS: Record<string, readonly string[]> = {
  payments: ['webhook.received', 'webhook.processed', 'webhook.failed', ...WEBHOOK_EVENT_TYPES],
  collaboration: ['connection.opened', 'connection.closed', 'storage.failed', 'authorize.failed'],
  agent: AGENT_DIAGNOSTIC_EVENTS,
}

/**
 * Records Atrium's own feature events as `feature` entries, tagged with the
 * feature and the event; payloads are redacted like request bodies. An event
 * published while a request runs joins its batch.
 */
export class FeatureWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #unsubscribe: (() => void)[] = []

  constructor(config: ResolvedConsoleConfig, recorder: ConsoleRecorder) {
    this.#config = config
    this.#recorder = recorder
  }

  install() {
    for (const [feature, events] of Object.entries(FEATURE_CHANNELS)) {
      for (const event of events) {
        this.#unsubscribe.push(onDiagnostic(feature, event, (message) => this.record(message)))
      }
    }
  }

  uninstall() {
    for (const unsubscribe of this.#unsubscribe) unsubscribe()
    this.#unsubscribe = []
  }

  /** Records one event; never throws */
  record(message: DiagnosticMessage) {
    try {
      const payload = (message.payload ?? {}) as Record<string, unknown>
      const failed = message.event.endsWith('.failed') || payload.status === 'failed'
      const details = [
        payload.provider,
        payload.eventId,
        payload.docName,
        payload.agentName,
        payload.toolName,
      ].filter((part) => typeof part === 'string')
      const durationMs = typeof payload.durationMs === 'number' ? payload.durationMs : null
      this.#recorder.record({
        type: 'feature',
        summary: [`${message.feature} ${message.event}`, ...details].join(' ').slice(0, 255),
        status: null,
        method: null,
        durationMs,
        slow: false,
        tags: failed ? [message.feature, message.event, 'error'] : [message.feature, message.event],
        content: {
          feature: message.feature,
          event: message.event,
          traceId: message.traceId ?? null,
          payload: redactValue(payload, this.#config.redact),
        },
      })
    } catch {
      // recording never fails the feature
    }
  }
}
