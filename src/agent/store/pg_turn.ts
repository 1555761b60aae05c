import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { MessageInsert, RunInsert, ThreadInsert } from './sqlite_turn.ts'
import { AGENT_TABLES } from './lucid_rows.ts'

const { threads, runs, messages } = AGENT_TABLES

const INSERT_THREAD = `new_thread as (
  insert into ${threads} (id, actor_ref, title, default_agent, created_at, updated_at)
  values (?, ?, ?, ?, ?, ?)
)`

const INSERT_RUN = `new_run as (
  insert into ${runs} (id, thread_id, actor_ref, agent_name, status, steps, created_at)
  values (?, ?, ?, ?, ?, ?, ?)
)`

const INSERT_QUESTION = `question as (
  insert into ${messages}
    (thread_id, run_id, role, content, tool_calls, tool_results, attachments, created_at)
  values (?, ?, ?, ?, ?, ?, ?, ?)
)`

/** A new thread is inserted with its `updated_at` already the question's time */
const NEW_THREAD_TURN = `with ${INSERT_THREAD}, ${INSERT_RUN}, ${INSERT_QUESTION} select 1`

const STORED_THREAD_TURN = `with ${INSERT_RUN}, ${INSERT_QUESTION}
update ${threads} set updated_at = ? where id = ?`

/**
 * The rows a turn writes when it starts, on PostgreSQL, as ONE statement
 * (data-modifying CTEs): a statement is atomic and its foreign keys are
 * checked at its end, so the thread, run and question are stored together or
 * not at all, in one round trip and one commit instead of a transaction's
 * six round trips.
 */
export async function startTurnOnPostgres(
  client: QueryClientContract,
  rows: { thread?: ThreadInsert; run: RunInsert; question: MessageInsert }
): Promise<void> {
  const { thread, run, question } = rows
  const runValues = [
    run.id,
    run.thread_id,
    run.actor_ref,
    run.agent_name,
    run.status,
    run.steps,
    run.created_at,
  ]
  const questionValues = [
    question.thread_id,
    question.run_id,
    question.role,
    question.content,
    question.tool_calls,
    question.tool_results,
    question.attachments,
    question.created_at,
  ]
  // null binds as SQL NULL; Lucid's binding type leaves it out
  if (thread) {
    const threadValues = [
      thread.id,
      thread.actor_ref,
      thread.title,
      thread.default_agent,
      thread.created_at,
      // the Lucid path touches the thread after the question: the same value, without a second write
      question.created_at,
    ]
    await client.rawQuery(NEW_THREAD_TURN, [
      ...threadValues,
      ...runValues,
      ...questionValues,
    ] as any[])
    return
  }
  await client.rawQuery(STORED_THREAD_TURN, [
    ...runValues,
    ...questionValues,
    question.created_at,
    run.thread_id,
  ] as any[])
}
