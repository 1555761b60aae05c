import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { durationBucket } from '../governance/histogram.ts'
import type { RunOutcome, UsageRow } from './contract.ts'
import { AGENT_TABLES } from './lucid_rows.ts'

/** The run counter a run end adds to */
const RUN_COUNTER: Record<RunOutcome['status'], string> = {
  done: 'runs_succeeded',
  failed: 'runs_failed',
  aborted: 'runs_cancelled',
}

/** What a run end adds to the rollups */
export interface CountedRunEnd {
  day: string
  model: string
  actorRef: string
  agentName: string
  status: RunOutcome['status']
  errorCode: string | null
  durationMs: number | null
  /** Model calls the run retried */
  retries: number
}

/** One addition to one rollup row: the row's key and the counters it adds to */
export interface RollupWrite {
  table: string
  key: Record<string, string | number>
  /** Counters with a non-zero amount only */
  increments: Record<string, number>
}

/** The write, or none when every amount is zero */
function rollupWrite(
  table: string,
  key: RollupWrite['key'],
  amounts: Record<string, number>
): RollupWrite[] {
  const increments = Object.fromEntries(Object.entries(amounts).filter(([, amount]) => amount))
  return Object.keys(increments).length ? [{ table, key, increments }] : []
}

/**
 * Adds to one row of a rollup table, creating it on first use: one portable
 * upsert (`ON CONFLICT ... DO UPDATE` on SQLite and PostgreSQL, `ON
 * DUPLICATE KEY UPDATE` on MariaDB) whose increments read the stored row, so
 * concurrent writers of the same key never lose each other's counts.
 * Counters left out of `increments` start at their column default, 0.
 */
async function addTo(client: QueryClientContract, { table, key, increments }: RollupWrite) {
  await client
    .insertQuery()
    .table(table)
    .insert({ ...key, ...increments })
    .onConflict(Object.keys(key))
    .merge(
      Object.fromEntries(
        Object.entries(increments).map(([counter, amount]) => [
          counter,
          client.raw('?? + ?', [`${table}.${counter}`, amount]),
        ])
      )
    )
}

/**
 * What one priced model call adds: the day × model × actor × agent rollup
 * and the narrow day × model and day × actor rollups `/spend` reads. Every
 * writer writes the tables in this order, so MariaDB's locks meet as rarely
 * as they can.
 */
export function usageRollupWrites(row: UsageRow): RollupWrite[] {
  const model = row.model.slice(0, 191)
  const spend = {
    model_calls: 1,
    unknown_usage_calls: row.known ? 0 : 1,
    unpriced_calls: row.costSource === 'unpriced' ? 1 : 0,
    uncached_input_tokens: row.uncachedInputTokens,
    cache_read_tokens: row.cacheReadTokens,
    cache_write_tokens: row.cacheWriteTokens,
    output_tokens: row.outputTokens,
    reasoning_tokens: row.reasoningTokens,
    cost: row.cost,
  }
  return [
    ...rollupWrite(
      AGENT_TABLES.rollups,
      { day: row.day, model, actor_ref: row.actorRef, agent_name: row.agentName },
      spend
    ),
    ...rollupWrite(AGENT_TABLES.modelRollups, { day: row.day, model }, spend),
    ...rollupWrite(AGENT_TABLES.actorRollups, { day: row.day, actor_ref: row.actorRef }, spend),
  ]
}

/**
 * What one run end adds: the day × model × actor × agent rollup and the
 * narrow ones `/reliability` reads (runs per agent, failures per error
 * code, the run's duration in its agent's histogram, and its retries).
 */
export function runEndRollupWrites(end: CountedRunEnd): RollupWrite[] {
  const counter = RUN_COUNTER[end.status]
  return [
    ...rollupWrite(
      AGENT_TABLES.rollups,
      {
        day: end.day,
        model: end.model.slice(0, 191),
        actor_ref: end.actorRef,
        agent_name: end.agentName,
      },
      { [counter]: 1 }
    ),
    ...rollupWrite(
      AGENT_TABLES.runRollups,
      { day: end.day, agent_name: end.agentName },
      { [counter]: 1 }
    ),
    ...(end.status === 'failed'
      ? rollupWrite(
          AGENT_TABLES.errorRollups,
          { day: end.day, error_code: (end.errorCode ?? 'unknown').slice(0, 64) },
          { runs_failed: 1 }
        )
      : []),
    ...(end.durationMs !== null
      ? rollupWrite(
          AGENT_TABLES.durationRollups,
          { day: end.day, agent_name: end.agentName, bucket: durationBucket(end.durationMs) },
          { runs: 1 }
        )
      : []),
    // Nothing is written for a run without retries (a zero amount is no write)
    ...rollupWrite(
      AGENT_TABLES.retryRollups,
      { day: end.day, agent_name: end.agentName },
      { retries: end.retries }
    ),
  ]
}

/** Adds one priced model call to its rollups, in the caller's transaction */
export async function addUsageToRollups(client: QueryClientContract, row: UsageRow) {
  for (const write of usageRollupWrites(row)) await addTo(client, write)
}

/** Counts one run end in its rollups, in the caller's transaction */
export async function addRunEndToRollups(client: QueryClientContract, end: CountedRunEnd) {
  for (const write of runEndRollupWrites(end)) await addTo(client, write)
}
