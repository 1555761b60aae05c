import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { queryPrepared } from '../../shared/postgres_statements.ts'
import type { MessageInsert, RunInsert, ThreadInsert } from './sqlite_turn.ts'
import { AGENT_TABLES } from './lucid_rows.ts'

const { threads, runs, messages } = AGENT_TABLES

/** $1…$7: the run; $8…$13: the question, whose time ($13) also touches the thread */
const INSERT_RUN_AND_QUESTION = `new_run as (
  insert into ${runs} (id, thread_id, actor_ref, agent_name, status, steps, created_at)
  values ($1, $2, $3, $4, $5, $6, $7)
),
question as (
  insert into ${messages}
    (thread_id, run_id, role, content, tool_calls, tool_results, attachments, created_at)
  values ($2, $1, $8, $9, $10, $11, $12, $13)
)`

/** A new thread ($14…$17) is inserted with its `updated_at` already the question's time */
const NEW_THREAD_TURN = `with new_thread as (
  insert into ${threads} (id, actor_ref, title, default_agent, created_at, updated_at)
  values ($2, $14, $15, $16, $17, $13)
),
${INSERT_RUN_AND_QUESTION}
select 1`

const STORED_THREAD_TURN = `with ${INSERT_RUN_AND_QUESTION}
update ${threads} set updated_at = $13 where id = $2`

/**
 * The rows a turn writes when it starts, on PostgreSQL, as ONE named
 * prepared statement (data-modifying CTEs): a statement is atomic and its
 * foreign keys are checked at its end, so the thread, run and question are
 * stored together or not at all, in one round trip and one commit instead
 * of a transaction's six round trips, planned once per connection.
 */
export async function startTurnOnPostgres(
  client: QueryClientContract,
  rows: { thread?: ThreadInsert; run: RunInsert; question: MessageInsert }
): Promise<void> {
  const { thread, run, question } = rows
  const values: unknown[] = [
    run.id,
    run.thread_id,
    run.actor_ref,
    run.agent_name,
    run.status,
    run.steps,
    run.created_at,
    question.role,
    question.content,
    question.tool_calls,
    question.tool_results,
    question.attachments,
    question.created_at,
  ]
  if (thread) {
    // the Lucid path touches the thread after the question: the same value, without a second write
    await queryPrepared(client, NEW_THREAD_TURN, [
      ...values,
      thread.actor_ref,
      thread.title,
      thread.default_agent,
      thread.created_at,
    ])
    return
  }
  await queryPrepared(client, STORED_THREAD_TURN, values)
}
