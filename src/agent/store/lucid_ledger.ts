import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import debug from '../debug.ts'
import { retryingTransaction } from '../../shared/transactions.ts'
import { costOf } from '../pricing/money.ts'
import type { ModelPriceRow, RunEnd, RunOutcome, UsageInput, UsageRow } from './contract.ts'
import { addRunEndToRollups, addUsageToRollups, type CountedRunEnd } from './lucid_rollups.ts'
import type { LucidPricingStore } from './lucid_pricing.ts'
import { AGENT_TABLES, toDate } from './lucid_rows.ts'

/** The ledger's transactions, run again after a deadlock or a busy database */
function inTransaction<Result>(
  client: QueryClientContract,
  work: (trx: TransactionClientContract) => Promise<Result>
): Promise<Result> {
  return retryingTransaction(client, work, (code) =>
    debug('ledger transaction retried after %s', code)
  )
}

/** The usage row of a call: the provider's reported cost, else the price in effect */
export function pricedUsage(input: UsageInput, price: ModelPriceRow | null): UsageRow {
  const reported = input.reportedCost
  const row: UsageRow = {
    ...input,
    model: input.model.slice(0, 191),
    priceId: null,
    cost: 0,
    costSource: 'unpriced',
  }
  delete row.reportedCost
  if (typeof reported === 'number' && Number.isSafeInteger(reported) && reported >= 0) {
    row.cost = reported
    row.costSource = 'reported'
  } else if (price) {
    row.priceId = price.id
    row.cost = costOf(input, price)
    row.costSource = 'estimated'
  }
  return row
}

/** The end of a stored running run: its duration, and what it adds to the rollups */
export function runEndOf(
  run: Record<string, any>,
  outcome: RunOutcome,
  finishedAt: Date
): CountedRunEnd {
  const startedAt = toDate(run.created_at)
  return {
    day: finishedAt.toISOString().slice(0, 10),
    model: outcome.model,
    actorRef: run.actor_ref,
    agentName: run.agent_name,
    status: outcome.status,
    errorCode: outcome.errorCode ?? null,
    durationMs: startedAt ? Math.max(0, finishedAt.getTime() - startedAt.getTime()) : null,
    retries: outcome.retries ?? 0,
  }
}

/** The columns of an `agent_usage` row */
export function usageColumns(row: UsageRow, createdAt: Date) {
  return {
    run_id: row.runId,
    thread_id: row.threadId,
    actor_ref: row.actorRef,
    agent_name: row.agentName,
    model: row.model,
    kind: row.kind,
    step: row.step,
    usage_known: row.known,
    uncached_input_tokens: row.uncachedInputTokens,
    cache_read_tokens: row.cacheReadTokens,
    cache_write_tokens: row.cacheWriteTokens,
    output_tokens: row.outputTokens,
    reasoning_tokens: row.reasoningTokens,
    price_id: row.priceId,
    cost: row.cost,
    cost_source: row.costSource,
    day: row.day,
    created_at: createdAt,
  }
}

function usageRow(row: any): UsageRow {
  return {
    runId: row.run_id,
    threadId: row.thread_id,
    actorRef: row.actor_ref,
    agentName: row.agent_name,
    model: row.model,
    kind: row.kind,
    step: Number(row.step),
    day: row.day,
    known: Boolean(Number(row.usage_known)),
    uncachedInputTokens: Number(row.uncached_input_tokens),
    cacheReadTokens: Number(row.cache_read_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    outputTokens: Number(row.output_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    priceId: row.price_id === null ? null : Number(row.price_id),
    cost: Number(row.cost),
    costSource: row.cost_source,
  }
}

/**
 * What the gateway spends: usage rows priced when written and the daily
 * rollups the spend and reliability reads use (lucid_rollups.ts), each
 * written in the same transaction as the row it sums.
 */
export class UsageLedger {
  #connect: () => QueryClientContract
  #pricing: LucidPricingStore

  constructor(connect: () => QueryClientContract, pricing: LucidPricingStore) {
    this.#connect = connect
    this.#pricing = pricing
  }

  async recordUsage(input: UsageInput): Promise<UsageRow> {
    await this.#pricing.ensureSeeded()
    const createdAt = new Date()
    return inTransaction(this.#connect(), async (trx) => {
      const row = await this.#price(trx, input, createdAt)
      await trx.insertQuery().table(AGENT_TABLES.usage).insert(usageColumns(row, createdAt))
      await addUsageToRollups(trx, row)
      return row
    })
  }

  /** Prices a model call and adds it to its rollup without a usage row (transient threads) */
  async countUsage(input: UsageInput): Promise<UsageRow> {
    await this.#pricing.ensureSeeded()
    const createdAt = new Date()
    return inTransaction(this.#connect(), async (trx) => {
      const row = await this.#price(trx, input, createdAt)
      await addUsageToRollups(trx, row)
      return row
    })
  }

  /** Counts a run's end in today's rollups without a run row (transient threads) */
  async countRunEnd(key: { actorRef: string; agentName: string; model: string }, end: RunEnd) {
    await inTransaction(this.#connect(), (trx) =>
      addRunEndToRollups(trx, {
        ...key,
        day: new Date().toISOString().slice(0, 10),
        status: end.status,
        errorCode: end.errorCode ?? null,
        durationMs: end.durationMs,
        retries: end.retries ?? 0,
      })
    )
  }

  async #price(trx: TransactionClientContract, input: UsageInput, at: Date): Promise<UsageRow> {
    return pricedUsage(input, await this.#pricing.priceAt(trx, input.model, at))
  }

  /** Ends a running run with its duration and counts it in the rollup of its end day */
  async finishRun(id: string, outcome: RunOutcome) {
    await inTransaction(this.#connect(), async (trx) => {
      const run = await trx
        .from(AGENT_TABLES.runs)
        .where('id', id)
        .where('status', 'running')
        .first()
      if (!run) return
      const finishedAt = new Date()
      const end = runEndOf(run, outcome, finishedAt)
      const affected = await trx
        .from(AGENT_TABLES.runs)
        .where('id', id)
        .where('status', 'running')
        .update({
          status: end.status,
          error_code: end.errorCode,
          steps: outcome.steps,
          retries: end.retries,
          finished_at: finishedAt,
          duration_ms: end.durationMs,
        })
      // Another writer ended it between the read and the update: counted once, by that writer
      if (Number(Array.isArray(affected) ? affected[0] : affected) !== 1) return
      await addRunEndToRollups(trx, end)
    })
  }

  async listUsage(runId: string) {
    const rows = await this.#connect()
      .from(AGENT_TABLES.usage)
      .where('run_id', runId)
      .orderBy('id', 'asc')
    return rows.map(usageRow)
  }
}
