import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { AgentStore } from './contract.ts'
import { AGENT_TABLES, json, toolCall } from './lucid_rows.ts'

/** The `agent_tool_calls` rows of the Lucid store: claims, ends and approvals */
export class LucidToolCalls {
  #client: () => QueryClientContract

  constructor(client: () => QueryClientContract) {
    this.#client = client
  }

  async claim(input: Parameters<AgentStore['claimToolCall']>[0]) {
    const now = new Date()
    try {
      await this.#client()
        .insertQuery()
        .table(AGENT_TABLES.toolCalls)
        .insert({
          run_id: input.runId,
          thread_id: input.threadId,
          actor_ref: input.actorRef,
          tool_call_id: input.toolCallId,
          tool_name: input.toolName,
          status: input.status ?? 'running',
          input: json(input.input ?? null),
          created_at: now,
          updated_at: now,
        })
      return { claimed: true as const }
    } catch (error) {
      // The unique (run_id, tool_call_id) index refused a second claim
      const existing = await this.#client()
        .from(AGENT_TABLES.toolCalls)
        .where('run_id', input.runId)
        .where('tool_call_id', input.toolCallId)
        .first()
      if (!existing) throw error
      return { claimed: false as const, row: toolCall(existing) }
    }
  }

  async finish(
    runId: string,
    toolCallId: string,
    outcome: Parameters<AgentStore['finishToolCall']>[2]
  ) {
    await this.#client()
      .from(AGENT_TABLES.toolCalls)
      .where('run_id', runId)
      .where('tool_call_id', toolCallId)
      .update({
        status: outcome.status,
        output: json(outcome.output ?? null),
        error_code: outcome.errorCode ?? null,
        execution_ms: outcome.executionMs ?? null,
        updated_at: new Date(),
      })
  }

  async markPendingApproval(runId: string, toolCallId: string) {
    await this.#client()
      .from(AGENT_TABLES.toolCalls)
      .where('run_id', runId)
      .where('tool_call_id', toolCallId)
      .where('status', 'running')
      .update({ status: 'pending_approval', updated_at: new Date() })
  }

  async findById(toolCallId: string) {
    const rows = await this.#client()
      .from(AGENT_TABLES.toolCalls)
      .where('tool_call_id', toolCallId)
      .orderBy('id', 'asc')
    return rows.map(toolCall)
  }

  async decideApproval(id: number, approved: boolean, reason?: string) {
    const affected = await this.#client()
      .from(AGENT_TABLES.toolCalls)
      .where('id', id)
      .where('status', 'pending_approval')
      .update({
        status: approved ? 'approved' : 'rejected',
        ...(approved ? {} : { output: json({ error: 'rejected', reason: reason ?? null }) }),
        updated_at: new Date(),
      })
    return Number(Array.isArray(affected) ? affected[0] : affected) === 1
  }

  async list(runId: string) {
    const rows = await this.#client()
      .from(AGENT_TABLES.toolCalls)
      .where('run_id', runId)
      .orderBy('id', 'asc')
    return rows.map(toolCall)
  }
}
