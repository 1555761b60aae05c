import { onDiagnostic, publishDiagnostic } from '../shared/diagnostics.ts'

/**
 * The events the agent gateway publishes on the diagnostics bus, as
 * `atrium:agent:<event>`; the run id is each message's trace id.
 */
export interface AgentDiagnosticEvents {
  'run.started': { runId: string; threadId: string; actorRef: string; agentName: string }
  'run.finished': {
    runId: string
    threadId: string
    agentName: string
    status: 'done' | 'failed' | 'aborted'
    errorCode: string | null
    steps: number
  }
  'tool_call.finished': {
    runId: string
    toolCallId: string
    toolName: string
    status: string
    errorCode: string | null
    executionMs: number | null
  }
  'usage.recorded': {
    runId: string
    model: string
    step: number
    known: boolean
    cost: number
    costSource: string
  }
  'retrieval.finished': {
    runId: string
    threadId: string
    agentName: string
    status: 'succeeded' | 'failed'
    passages: number
    durationMs: number
  }
}

export type AgentDiagnosticEvent = keyof AgentDiagnosticEvents

export const AGENT_DIAGNOSTIC_EVENTS: readonly AgentDiagnosticEvent[] = [
  'run.started',
  'run.finished',
  'tool_call.finished',
  'usage.recorded',
  'retrieval.finished',
]

/** Publishes one agent event; without a subscriber it costs a property read */
export function publishAgentEvent<Event extends AgentDiagnosticEvent>(
  event: Event,
  payload: AgentDiagnosticEvents[Event]
) {
  publishDiagnostic('agent', event, payload, payload.runId)
}

/** Subscribes to every agent event and returns the unsubscribe */
export function onAgentEvents(
  handler: (event: AgentDiagnosticEvent, payload: Record<string, unknown>) => void
) {
  const unsubscribers = AGENT_DIAGNOSTIC_EVENTS.map((event) =>
    onDiagnostic<Record<string, unknown>>('agent', event, (message) =>
      handler(event, message.payload)
    )
  )
  return () => {
    for (const unsubscribe of unsubscribers) unsubscribe()
  }
}
