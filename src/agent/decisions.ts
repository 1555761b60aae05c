import type { ApprovalWaiters } from './approvals.ts'
import debug from './debug.ts'
import { AgentForbiddenException, AgentNotFoundException } from './errors.ts'
import type { ThreadStore, ToolCallRow } from './store/contract.ts'
import type { TransientThreads } from './transient/registry.ts'
import type { AgentActor, ResolvedAgentConfig } from './types.ts'

/**
 * Decisions on tool calls waiting for approval, from the chat routes and
 * the governance API: the call is found by its id among stored and
 * transient threads, and the run is woken here or on its instance.
 */
export class ToolCallDecisions {
  #config: ResolvedAgentConfig
  #approvals: ApprovalWaiters
  #transient: TransientThreads

  constructor(
    config: ResolvedAgentConfig,
    approvals: ApprovalWaiters,
    transient: TransientThreads
  ) {
    this.#config = config
    this.#approvals = approvals
    this.#transient = transient
  }

  /**
   * Approves or rejects a tool call waiting for approval. The run is found
   * from the tool-call id; the first decision wins (one conditional update)
   * and any later one answers `{ ok: false }`.
   */
  async decide(actor: AgentActor, toolCallId: string, approved: boolean, reason?: string) {
    const calls = await this.#toolCalls(toolCallId)
    if (!calls.length) throw new AgentNotFoundException('tool call')
    const owned = calls.filter((call) => call.row.actorRef === actor.id)
    if (!owned.length) throw new AgentForbiddenException('tool call')
    const pending = owned.find((call) => call.row.status === 'pending_approval')
    if (!pending) return { ok: false }
    return { ok: await this.#decide(pending, approved, reason) }
  }

  /**
   * A decision from the governance API, which its own authorization
   * guards: any actor's call. Null when no call has the id.
   */
  async decideFromDashboard(toolCallId: string, approved: boolean, reason?: string) {
    const calls = await this.#toolCalls(toolCallId)
    if (!calls.length) return null
    const pending = calls.find((call) => call.row.status === 'pending_approval')
    return pending ? this.#decide(pending, approved, reason) : false
  }

  /** Every recorded call with this id, stored or in a transient thread, with where it is kept */
  async #toolCalls(toolCallId: string) {
    const stored = await this.#config.store.findToolCallsById(toolCallId)
    const transient = await this.#transient.findToolCalls(toolCallId)
    return [
      ...stored.map((row) => ({ row, store: this.#config.store as ThreadStore })),
      ...transient.map(({ row, thread }) => ({ row, store: thread as ThreadStore })),
    ]
  }

  /** One conditional update; the winner wakes the run here or on its instance */
  async #decide(
    { row: pending, store }: { row: ToolCallRow; store: ThreadStore },
    approved: boolean,
    reason?: string
  ) {
    const won = await store.decideApproval(pending.id, approved, reason)
    if (won) {
      const woken = this.#approvals.resolve(pending.runId, pending.toolCallId, {
        approved,
        reason,
      })
      // The run waits on another instance: tell it over the sink
      if (!woken && this.#config.sink) {
        await this.#config.sink.publishDecision({
          type: 'decision',
          runId: pending.runId,
          toolCallId: pending.toolCallId,
          approved,
          ...(reason === undefined ? {} : { reason }),
        })
      }
    }
    debug(
      'tool call %s %s (%s)',
      pending.toolCallId,
      approved ? 'approved' : 'rejected',
      won ? 'won' : 'late'
    )
    return won
  }
}
