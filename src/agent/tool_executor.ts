import type { ApplicationService } from '@adonisjs/core/types'
import type { ApprovalWaiters } from './approvals.ts'
import debug from './debug.ts'
import { publishAgentEvent } from './diagnostics.ts'
import type { ModelToolCall } from './model/port.ts'
import type { ThreadStore } from './store/contract.ts'
import { ToolInputError, validateToolInput } from './tools.ts'
import type { AgentActor, ResolvedTool, RolesPolicy } from './types.ts'

/** Where a tool call runs: its run, thread and caller */
export interface ToolCallScope {
  /** The thread's rows: the store, or the memory of a transient thread */
  store: ThreadStore
  runId: string
  threadId: string
  actor: AgentActor
  /** Tools this agent may use (its allow-list), by name */
  tools: Map<string, ResolvedTool>
  /** Aborted when the run is cancelled */
  signal: AbortSignal
  /** Announces a call waiting for approval on the run's stream */
  announce(frame: { toolCallId: string; toolName: string; input: unknown }): void
  /** Where the run waits for the decision */
  approvals: ApprovalWaiters
}

/** The structured result the model reads when a call did not succeed */
function refusal(error: string, message: string) {
  return { error, message }
}

/** A value the store and the model can both take: plain JSON */
function toJson(value: unknown): unknown {
  if (value === undefined) return null
  return JSON.parse(JSON.stringify(value))
}

/** How a tool call ended, as stored and announced */
export interface ToolCallEnd {
  status: 'succeeded' | 'failed' | 'denied'
  output: unknown
  errorCode: string | null
  executionMs: number | null
}

/**
 * Records a call before it runs, keyed by its tool-call id: a call already
 * recorded (a resume, a repeated id) is answered from its row, never run again.
 */
export function claimToolCall(
  call: ModelToolCall,
  scope: Pick<ToolCallScope, 'store' | 'runId' | 'threadId' | 'actor'>
) {
  return scope.store.claimToolCall({
    runId: scope.runId,
    threadId: scope.threadId,
    actorRef: scope.actor.id,
    toolCallId: call.toolCallId,
    toolName: call.toolName.slice(0, 64),
    input: call.input ?? null,
  })
}

/** Stores how a call ended and announces it; returns what the model receives */
export async function endToolCall(
  scope: Pick<ToolCallScope, 'store' | 'runId'>,
  call: ModelToolCall,
  end: ToolCallEnd
): Promise<unknown> {
  await scope.store.finishToolCall(scope.runId, call.toolCallId, end)
  publishAgentEvent('tool_call.finished', {
    runId: scope.runId,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    status: end.status,
    errorCode: end.errorCode,
    executionMs: end.executionMs,
  })
  return end.output
}

/**
 * Runs the tool calls of a model step: role gate, input re-validation,
 * execution under `toolTimeoutMs`, then one row per call keyed by the
 * model's tool-call id, so a call id seen twice never runs twice.
 */
export class ToolExecutor {
  #app: ApplicationService
  #policy: RolesPolicy
  #timeoutMs?: number

  constructor(app: ApplicationService, policy: RolesPolicy, timeoutMs: number | undefined) {
    this.#app = app
    this.#policy = policy
    this.#timeoutMs = timeoutMs
  }

  /** The decision already recorded on a call, or null while it is pending */
  async #storedDecision(store: ThreadStore, runId: string, toolCallId: string) {
    const rows = await store.findToolCallsById(toolCallId)
    const row = rows.find((candidate) => candidate.runId === runId)
    if (row?.status === 'approved') return { approved: true }
    if (row?.status !== 'rejected') return null
    const reason = (row.output as { reason?: unknown } | null)?.reason
    return { approved: false, ...(typeof reason === 'string' ? { reason } : {}) }
  }

  /** Executes one call and returns what the model receives as its result */
  async execute(call: ModelToolCall, scope: ToolCallScope): Promise<unknown> {
    const claim = await claimToolCall(call, scope)
    if (!claim.claimed) {
      debug('tool call %s of run %s already recorded: not run again', call.toolCallId, scope.runId)
      return claim.row.status === 'running'
        ? refusal('tool_call_in_progress', 'This tool call is already running')
        : claim.row.output
    }

    const finish = (
      status: ToolCallEnd['status'],
      output: unknown,
      errorCode: string | null,
      executionMs: number | null = null
    ) => endToolCall(scope, call, { status, output, errorCode, executionMs })

    const tool = scope.tools.get(call.toolName)
    if (!tool) {
      debug('run %s: model called unknown tool', scope.runId)
      return finish(
        'failed',
        refusal('unknown_tool', `There is no tool named "${call.toolName}"`),
        'unknown_tool'
      )
    }

    const allowed = await this.#policy({
      actor: scope.actor,
      toolName: tool.spec.name,
      roles: tool.spec.roles,
    })
    if (!allowed) {
      debug('run %s: tool %s denied by the roles policy', scope.runId, tool.spec.name)
      return finish(
        'denied',
        refusal('forbidden', `The caller is not allowed to use the tool "${tool.spec.name}"`),
        'forbidden'
      )
    }

    let input: unknown
    try {
      input = await validateToolInput(tool, call.input)
    } catch (error) {
      if (!(error instanceof ToolInputError)) throw error
      return finish('failed', refusal('invalid_input', error.message), 'invalid_input')
    }

    if (tool.spec.requiresApproval) {
      // The row says pending_approval before any client can learn of the call
      await scope.store.markPendingApproval(scope.runId, call.toolCallId)
      scope.announce({ toolCallId: call.toolCallId, toolName: tool.spec.name, input })
      let decision
      try {
        const waiting = scope.approvals.wait(scope.runId, call.toolCallId, scope.signal)
        waiting.catch(() => {})
        // A decision taken before this wait began (on another instance) is already stored
        const stored = await this.#storedDecision(scope.store, scope.runId, call.toolCallId)
        if (stored) scope.approvals.resolve(scope.runId, call.toolCallId, stored)
        decision = await waiting
      } catch (error) {
        await finish('failed', refusal('aborted', 'The run was cancelled'), 'aborted')
        throw error
      }
      if (!decision.approved) {
        debug('run %s: tool %s rejected', scope.runId, tool.spec.name)
        return {
          error: 'rejected',
          message: `A person rejected this call of "${tool.spec.name}"`,
          ...(decision.reason ? { reason: decision.reason } : {}),
        }
      }
    }

    const controller = new AbortController()
    const onRunAbort = () => controller.abort(scope.signal.reason)
    scope.signal.addEventListener('abort', onRunAbort, { once: true })
    let timer: NodeJS.Timeout | undefined
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    try {
      const execution = Promise.resolve().then(() =>
        tool.run(
          input,
          {
            actor: scope.actor,
            runId: scope.runId,
            threadId: scope.threadId,
            toolCallId: call.toolCallId,
            signal: controller.signal,
          },
          this.#app
        )
      )
      const outcomes: Promise<{ timedOut: boolean; value?: unknown }>[] = [
        execution.then((value) => ({ timedOut: false, value })),
      ]
      if (this.#timeoutMs !== undefined) {
        const timeoutMs = this.#timeoutMs
        outcomes.push(
          new Promise((resolve) => {
            timer = setTimeout(() => resolve({ timedOut: true }), timeoutMs)
          })
        )
      }
      // A handler that ignores its signal keeps running; its late result is dropped
      execution.catch(() => {})
      const outcome = await Promise.race(outcomes)
      if (outcome.timedOut) {
        controller.abort(new Error('tool timeout'))
        debug('run %s: tool %s timed out', scope.runId, tool.spec.name)
        return finish(
          'failed',
          refusal(
            'tool_timeout',
            `The tool "${tool.spec.name}" did not finish within ${this.#timeoutMs} ms`
          ),
          'timeout',
          elapsed()
        )
      }
      return finish('succeeded', toJson(outcome.value), null, elapsed())
    } catch (error) {
      if (scope.signal.aborted) {
        await finish('failed', refusal('aborted', 'The run was cancelled'), 'aborted', elapsed())
        throw error
      }
      debug('run %s: tool %s failed: %s', scope.runId, tool.spec.name, (error as Error)?.name)
      return finish(
        'failed',
        refusal('tool_failed', `The tool "${tool.spec.name}" failed`),
        'tool_error',
        elapsed()
      )
    } finally {
      clearTimeout(timer)
      scope.signal.removeEventListener('abort', onRunAbort)
    }
  }

  /** The step limit was reached: the call is recorded as skipped and never runs */
  async skip(
    call: ModelToolCall,
    scope: Pick<ToolCallScope, 'store' | 'runId' | 'threadId' | 'actor'>
  ) {
    const output = {
      error: 'max_steps',
      message: 'The step limit was reached before this tool could run',
    }
    const claim = await scope.store.claimToolCall({
      runId: scope.runId,
      threadId: scope.threadId,
      actorRef: scope.actor.id,
      toolCallId: call.toolCallId,
      toolName: call.toolName.slice(0, 64),
      input: call.input ?? null,
      status: 'skipped',
    })
    if (claim.claimed) {
      await scope.store.finishToolCall(scope.runId, call.toolCallId, {
        status: 'skipped',
        output,
        errorCode: 'max_steps',
      })
    }
    return output
  }
}
