import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { RunEnd, TransientSnapshot, TransientThreadStore, UsageInput } from './contract.ts'
import { usageColumns, type UsageLedger } from './lucid_ledger.ts'
import { withoutNul } from '../../shared/nul.ts'
import { AGENT_TABLES, json } from './lucid_rows.ts'

/**
 * Transient threads on Lucid: their model calls and run ends go to the
 * daily rollups as they happen; the rows are written once, at promote.
 */
export class LucidTransientThreads implements TransientThreadStore {
  #connect: () => QueryClientContract
  #ledger: UsageLedger

  constructor(connect: () => QueryClientContract, ledger: UsageLedger) {
    this.#connect = connect
    this.#ledger = ledger
  }

  countUsage(row: UsageInput) {
    return this.#ledger.countUsage(row)
  }

  countRunEnd(key: { actorRef: string; agentName: string; model: string }, end: RunEnd) {
    return this.#ledger.countRunEnd(key, end)
  }

  async save(snapshot: TransientSnapshot) {
    const { thread, messages, runs, toolCalls, usage } = snapshot
    await this.#connect().transaction(async (trx) => {
      await trx
        .insertQuery()
        .table(AGENT_TABLES.threads)
        .insert({
          id: thread.id,
          actor_ref: thread.actorRef,
          title: thread.title,
          default_agent: thread.defaultAgent,
          created_at: thread.createdAt ?? new Date(),
          updated_at: thread.updatedAt ?? new Date(),
        })
      if (runs.length) {
        await trx
          .insertQuery()
          .table(AGENT_TABLES.runs)
          .multiInsert(
            runs.map((run) => ({
              id: run.id,
              thread_id: run.threadId,
              actor_ref: run.actorRef,
              agent_name: run.agentName,
              status: run.status,
              error_code: run.errorCode,
              steps: run.steps,
              retries: run.retries,
              created_at: run.createdAt ?? new Date(),
              finished_at: run.finishedAt,
              duration_ms: run.durationMs,
            }))
          )
      }
      // Inserted in order, so the new ids keep the thread's message order
      for (const message of messages) {
        await trx
          .insertQuery()
          .table(AGENT_TABLES.messages)
          .insert({
            thread_id: message.threadId,
            run_id: message.runId,
            role: message.role,
            content: withoutNul(message.content),
            tool_calls: message.toolCalls?.length ? json(message.toolCalls) : null,
            tool_results: message.toolResults?.length ? json(message.toolResults) : null,
            follow_ups: message.followUps ? json(message.followUps) : null,
            attachments: message.attachments?.length ? json(message.attachments) : null,
            created_at: message.createdAt ?? new Date(),
          })
      }
      for (const call of toolCalls) {
        await trx
          .insertQuery()
          .table(AGENT_TABLES.toolCalls)
          .insert({
            run_id: call.runId,
            thread_id: call.threadId,
            actor_ref: call.actorRef,
            tool_call_id: call.toolCallId,
            tool_name: call.toolName,
            status: call.status,
            input: json(call.input ?? null),
            output: call.output === null ? null : json(call.output),
            error_code: call.errorCode,
            execution_ms: call.executionMs,
            created_at: call.createdAt,
            updated_at: call.updatedAt,
          })
      }
      for (const row of usage) {
        await trx.insertQuery().table(AGENT_TABLES.usage).insert(usageColumns(row, row.createdAt))
      }
    })
  }
}
