import { withoutNul, withoutNulEscapes } from '../../shared/nul.ts'
import type { MessageRow, RunRow, ThreadRow, ToolCallRow, TurnStart } from './contract.ts'

/** The gateway's tables, as the migration stubs create them */
export const AGENT_TABLES = {
  threads: 'agent_threads',
  messages: 'agent_messages',
  runs: 'agent_runs',
  toolCalls: 'agent_tool_calls',
  usage: 'agent_usage',
  quota: 'agent_quota',
  pricing: 'agent_pricing',
  rollups: 'agent_rollups',
  modelRollups: 'agent_model_rollups',
  actorRollups: 'agent_actor_rollups',
  runRollups: 'agent_run_rollups',
  errorRollups: 'agent_error_rollups',
  durationRollups: 'agent_duration_rollups',
  retryRollups: 'agent_retry_rollups',
  quotaHolds: 'agent_quota_holds',
} as const

/** Reads a stored date the same way on every dialect (SQLite keeps epoch ms) */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value
  const date = new Date(
    typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : (value as string)
  )
  return Number.isNaN(date.getTime()) ? null : date
}

/** A value as its JSON column stores it; a NUL in a string is kept as U+FFFD (see shared/nul.ts) */
export function json(value: unknown) {
  if (value === undefined) return null
  const text: string | undefined = JSON.stringify(value)
  return text === undefined ? text : withoutNulEscapes(text)
}

export function parse(value: unknown): any {
  return value === null || value === undefined ? null : JSON.parse(String(value))
}

export function thread(row: any): ThreadRow {
  return {
    id: row.id,
    actorRef: row.actor_ref,
    title: row.title,
    defaultAgent: row.default_agent,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  }
}

export function run(row: any): RunRow {
  return {
    id: row.id,
    threadId: row.thread_id,
    actorRef: row.actor_ref,
    agentName: row.agent_name,
    status: row.status,
    errorCode: row.error_code,
    steps: Number(row.steps),
    retries: Number(row.retries ?? 0),
    createdAt: toDate(row.created_at),
    finishedAt: toDate(row.finished_at),
    durationMs:
      row.duration_ms === null || row.duration_ms === undefined ? null : Number(row.duration_ms),
  }
}

export function toolCall(row: any): ToolCallRow {
  return {
    id: Number(row.id),
    runId: row.run_id,
    threadId: row.thread_id,
    actorRef: row.actor_ref,
    toolCallId: row.tool_call_id,
    toolName: row.tool_name,
    status: row.status,
    input: parse(row.input),
    output: parse(row.output),
    errorCode: row.error_code,
    executionMs: row.execution_ms === null ? null : Number(row.execution_ms),
  }
}

export function message(row: any): MessageRow {
  return {
    id: Number(row.id),
    threadId: row.thread_id,
    runId: row.run_id,
    role: row.role,
    content: row.content,
    toolCalls: parse(row.tool_calls),
    toolResults: parse(row.tool_results),
    followUps: parse(row.follow_ups),
    attachments: parse(row.attachments),
    createdAt: toDate(row.created_at),
  }
}

/** The rows of `startTurn`, as every path binds them; `thread` only for a new thread */
export function turnStartRows(input: TurnStart) {
  const now = new Date()
  const turnThread = input.thread
  const created = input.newThread
    ? {
        id: turnThread.id,
        actor_ref: turnThread.actorRef,
        title: turnThread.title,
        default_agent: turnThread.defaultAgent,
        created_at: turnThread.createdAt ?? now,
        updated_at: turnThread.updatedAt ?? now,
      }
    : undefined
  const threadId = turnThread.id
  return {
    thread: created,
    run: {
      id: input.run.id,
      thread_id: threadId,
      actor_ref: input.run.actorRef,
      agent_name: input.run.agentName,
      status: 'running',
      steps: 0,
      created_at: now,
    },
    question: {
      thread_id: threadId,
      run_id: input.run.id,
      role: 'user',
      content: withoutNul(input.question.content),
      tool_calls: null,
      tool_results: null,
      attachments: input.question.attachments?.length ? json(input.question.attachments) : null,
      created_at: now,
    },
  }
}
