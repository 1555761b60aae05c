/**
 * What one chat turn carries through the runner: the request, the step
 * budget its agents share, and one agent's part of it.
 */
import type { ApprovalWaiters } from './approvals.ts'
import type { ModelMessage, ModelToolCall } from './model/port.ts'
import type { RunEventLog } from './run_log.ts'
import type { ThreadRow, ThreadStore } from './store/contract.ts'
import type { AgentActor, ResolvedAgent } from './types.ts'

/** One chat turn to run */
export interface TurnRequest {
  approvals: ApprovalWaiters
  runId: string
  thread: ThreadRow
  actor: AgentActor
  agent: ResolvedAgent
  log: RunEventLog
  signal: AbortSignal
  /** The thread's rows: the store, or the memory of a transient thread */
  store: ThreadStore
  /** Settles once the turn's own rows (run, question) are stored; `store` waits for it */
  stored: Promise<void>
  /** The conversation so far, the question last, when the turn knew it; else the runner reads it */
  history?: ModelMessage[]
  /** The chat body's `pageContext`, for this turn only */
  pageContext?: Record<string, unknown>
}

/** The UTC day quotas and usage rows are kept by */
export function today() {
  return new Date().toISOString().slice(0, 10)
}

/** The model steps of one run: the turn's agent and the agents it hands off to share them */
export interface StepBudget {
  used: number
  limit: number
  /** The quota day, stamped once when the run starts: a run crossing midnight charges one day */
  quotaDay: string
  /** Model calls retried after the provider failed before streaming, over the run */
  retries: number
}

export type ToolResult = { toolCallId: string; toolName: string; output: unknown }

/** One agent's part of a turn: the turn's agent (depth 0), or one handed a task */
export interface AgentPass {
  agent: ResolvedAgent
  depth: number
  /** The conversation it answers; the steps are appended to it */
  messages: ModelMessage[]
  /** The turn's agent only: the retrieved passages' section of the system prompt */
  retrieved?: string
  /** The turn's agent only: stream the text, store the assistant and tool messages */
  onDelta?(text: string): void
  onStep?(text: string, calls: ModelToolCall[]): Promise<void>
  onResults?(results: ToolResult[]): Promise<void>
}
