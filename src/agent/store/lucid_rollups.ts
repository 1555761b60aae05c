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

/**
 * Adds to one row of a rollup table, creating it on first use: one portable
 * upsert (`ON CONFLICT ... DO UPDATE` on SQLite and PostgreSQL, `ON
 * DUPLICATE KEY UPDATE` on MariaDB) whose increments read the stored row, so
 * concurrent writers of the same key never lose each other's counts.
 * Counters left out of `increments` start at their column default, 0.
 */
async function addTo(
  client: QueryClientContract,
  table: string,
  key: Record<string, string | number>,
  increments: Record<string, number>
) {
  const added = Object.entries(increments).filter(([, amount]) => amount)
  if (!added.length) return
  await client
    .insertQuery()
    .table(table)
    .insert({ ...key, ...Object.fromEntries(added) })
    .onConflict(Object.keys(key))
    .merge(
      Object.fromEntries(
        added.map(([counter, amount]) => [
          counter,
          client.raw('?? + ?', [`${table}.${counter}`, amount]),
        ])
      )
    )
}

/**
 * Adds one priced model call to the day × model × actor × agent rollup and
 * to the narrow day × model and day × actor rollups `/spend` reads. The
 * caller's transaction makes the three one write; tables are written in the
 * same order by every writer, so MariaDB's locks meet as rarely as they can.
 */
export async function addUsageToRollups(client: QueryClientContract, row: UsageRow) {
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
  await addTo(
    client,
    AGENT_TABLES.rollups,
    { day: row.day, model, actor_ref: row.actorRef, agent_name: row.agentName },
    spend
  )
  await addTo(client, AGENT_TABLES.modelRollups, { day: row.day, model }, spend)
  await addTo(client, AGENT_TABLES.actorRollups, { day: row.day, actor_ref: row.actorRef }, spend)
}

/**
 * Counts one run end in the day × model × actor × agent rollup and in the
 * narrow ones `/reliability` reads: runs per agent, failures per error
 * code, the run's duration in its agent's histogram, and its retries.
 */
export async function addRunEndToRollups(client: QueryClientContract, end: CountedRunEnd) {
  const counter = RUN_COUNTER[end.status]
  await addTo(
    client,
    AGENT_TABLES.rollups,
    {
      day: end.day,
      model: end.model.slice(0, 191),
      actor_ref: end.actorRef,
      agent_name: end.agentName,
    },
    { [counter]: 1 }
  )
  await addTo(
    client,
    AGENT_TABLES.runRollups,
    { day: end.day, agent_name: end.agentName },
    { [counter]: 1 }
  )
  if (end.status === 'failed') {
    await addTo(
      client,
      AGENT_TABLES.errorRollups,
      { day: end.day, error_code: (end.errorCode ?? 'unknown').slice(0, 64) },
      { runs_failed: 1 }
    )
  }
  if (end.durationMs !== null) {
    await addTo(
      client,
      AGENT_TABLES.durationRollups,
      { day: end.day, agent_name: end.agentName, bucket: durationBucket(end.durationMs) },
      { runs: 1 }
    )
  }
  // Nothing is written for a run without retries (addTo skips zero increments)
  await addTo(
    client,
    AGENT_TABLES.retryRollups,
    { day: end.day, agent_name: end.agentName },
    { retries: end.retries }
  )
}
