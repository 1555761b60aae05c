import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { formatMicros } from '../pricing/money.ts'
import { AGENT_TABLES } from '../store/lucid_rows.ts'
import { p95FromBuckets } from './histogram.ts'
import { nearestRankP95 } from './percentile.ts'

/** An inclusive range of UTC days, `YYYY-MM-DD` */
export interface DayWindow {
  fromDay: string
  toDay: string
}

/** Tokens, calls and cost of one slice of the rollups */
export interface SpendFigures {
  modelCalls: number
  /** Calls whose provider reported no usage (their tokens count as 0) */
  unknownUsageCalls: number
  /** Calls of a model with no price in effect (their cost counts as 0) */
  unpricedCalls: number
  uncachedInputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  outputTokens: number
  reasoningTokens: number
  /** Micro-units of the currency */
  costMicros: number
  /** The same cost as a decimal string, `"0.001250"` */
  cost: string
}

export type ModelSpendRow = SpendFigures & { model: string }
export type ActorSpendRow = SpendFigures & { actorRef: string }
export type UsageTrendPoint = SpendFigures & { day: string }

export interface SpendOverview {
  from: string
  to: string
  byModel: ModelSpendRow[]
  byActor: ActorSpendRow[]
  trend: UsageTrendPoint[]
}

export interface ThreadSpendRowWithLabel {
  threadId: string
  actorRef: string | null
  title: string | null
  /** The title, or a stand-in for an untitled or purged thread */
  label: string
  deleted: boolean
  runs: number
  modelCalls: number
  tokens: number
  costMicros: number
  cost: string
}

/** Finished runs of one slice: succeeded + failed + cancelled */
export interface RunFigures {
  runs: number
  succeeded: number
  failed: number
  cancelled: number
  /** Null when no run finished */
  successRate: number | null
  errorRate: number | null
}

export interface ReliabilityOverview {
  from: string
  to: string
  metrics: RunFigures & {
    /** Model calls the gateway retried in the window's runs */
    retries: number
    /** From 5%-wide duration buckets: at most 5% above the exact nearest-rank p95 */
    p95DurationMs: number | null
  }
  byAgent: Array<
    RunFigures & {
      agentName: string
      /** Model calls the gateway retried in the window's runs of this agent */
      retries: number
      p95DurationMs: number | null
    }
  >
  errors: Array<{ errorCode: string; count: number }>
  trend: Array<RunFigures & { day: string }>
}

export interface ToolStatRow {
  toolName: string
  calls: number
  failed: number
  rejected: number
  /** Refused by the roles policy */
  denied: number
  p95ExecutionMs: number | null
}

const TOKEN_COLUMNS = {
  uncachedInputTokens: 'uncached_input_tokens',
  cacheReadTokens: 'cache_read_tokens',
  cacheWriteTokens: 'cache_write_tokens',
  outputTokens: 'output_tokens',
  reasoningTokens: 'reasoning_tokens',
} as const

const SPEND_COLUMNS = {
  modelCalls: 'model_calls',
  unknownUsageCalls: 'unknown_usage_calls',
  unpricedCalls: 'unpriced_calls',
  ...TOKEN_COLUMNS,
  costMicros: 'cost',
} as const

const RUN_COLUMNS = {
  succeeded: 'runs_succeeded',
  failed: 'runs_failed',
  cancelled: 'runs_cancelled',
} as const

/** Every day of the window, in order */
export function daysOf(window: DayWindow) {
  const days: string[] = []
  const cursor = new Date(`${window.fromDay}T00:00:00.000Z`)
  const last = new Date(`${window.toDay}T00:00:00.000Z`)
  while (cursor <= last) {
    days.push(cursor.toISOString().slice(0, 10))
    cursor.setUTCDate(cursor.getUTCDate() + 1)
  }
  return days
}

/** Start of the first day and start of the day after the last, UTC */
function bounds(window: DayWindow) {
  const to = new Date(`${window.toDay}T00:00:00.000Z`)
  to.setUTCDate(to.getUTCDate() + 1)
  return { from: new Date(`${window.fromDay}T00:00:00.000Z`), to }
}

function spendFigures(row: any = {}): SpendFigures {
  const figures: Record<string, unknown> = {}
  for (const field of Object.keys(SPEND_COLUMNS)) figures[field] = Number(row[field] ?? 0)
  figures.cost = formatMicros(figures.costMicros as number)
  return figures as unknown as SpendFigures
}

function runFigures(row: any = {}): RunFigures {
  const succeeded = Number(row.succeeded ?? 0)
  const failed = Number(row.failed ?? 0)
  const cancelled = Number(row.cancelled ?? 0)
  const runs = succeeded + failed + cancelled
  return {
    runs,
    succeeded,
    failed,
    cancelled,
    successRate: runs ? succeeded / runs : null,
    errorRate: runs ? failed / runs : null,
  }
}

/**
 * The governance API's aggregates. Spend, run counts, error families and
 * run durations read narrow daily rollups written with each usage row and
 * run end (one table per view, keyed by day first), never the usage or run
 * rows; tool percentiles are ranked in the database over stored durations.
 */
export class LucidInsightQueries {
  #connect: () => QueryClientContract

  constructor(connect: () => QueryClientContract) {
    this.#connect = connect
  }

  /** Rows of a rollup table in the window, summed per `group` */
  #rollups(table: string, window: DayWindow, columns: Record<string, string>, group: string) {
    const query = this.#connect()
      .from(table)
      .where('day', '>=', window.fromDay)
      .where('day', '<=', window.toDay)
      .select(group)
      .groupBy(group)
    for (const [alias, column] of Object.entries(columns)) query.sum(`${column} as ${alias}`)
    return query
  }

  async spend(window: DayWindow): Promise<SpendOverview> {
    const byCost = (a: SpendFigures, b: SpendFigures) => b.costMicros - a.costMicros
    // Independent reads: on a pooled connection (PostgreSQL, MariaDB) they overlap.
    // The day × model rollup holds every call once, so its days are the trend
    const [models, actors, days] = await Promise.all([
      this.#rollups(AGENT_TABLES.modelRollups, window, SPEND_COLUMNS, 'model'),
      this.#rollups(AGENT_TABLES.actorRollups, window, SPEND_COLUMNS, 'actor_ref'),
      this.#rollups(AGENT_TABLES.modelRollups, window, SPEND_COLUMNS, 'day'),
    ])
    const perDay = new Map(days.map((row: any) => [row.day, row]))
    return {
      from: window.fromDay,
      to: window.toDay,
      byModel: models
        .map((row: any) => ({ model: row.model, ...spendFigures(row) }))
        .sort((a, b) => byCost(a, b) || a.model.localeCompare(b.model)),
      byActor: actors
        .map((row: any) => ({ actorRef: row.actor_ref, ...spendFigures(row) }))
        .sort((a, b) => byCost(a, b) || a.actorRef.localeCompare(b.actorRef)),
      trend: daysOf(window).map((day) => ({ day, ...spendFigures(perDay.get(day)) })),
    }
  }

  /** Threads by cost in the window; ties by thread id */
  async topThreads(window: DayWindow, limit: number): Promise<ThreadSpendRowWithLabel[]> {
    const client = this.#connect()
    const tokens = Object.values(TOKEN_COLUMNS).join(' + ')
    const rows = await client
      .from(AGENT_TABLES.usage)
      .where('day', '>=', window.fromDay)
      .where('day', '<=', window.toDay)
      .groupBy('thread_id')
      .select('thread_id')
      .sum('cost as cost')
      .count('* as model_calls')
      .countDistinct('run_id as runs')
      .select(client.raw(`sum(${tokens}) as tokens`))
      .orderByRaw('sum(cost) desc')
      .orderBy('thread_id', 'asc')
      .limit(limit)
    const ids = rows.map((row: any) => row.thread_id)
    const threads = ids.length ? await client.from(AGENT_TABLES.threads).whereIn('id', ids) : []
    const byId = new Map(threads.map((thread: any) => [thread.id, thread]))
    return rows.map((row: any) => {
      const thread: any = byId.get(row.thread_id)
      const costMicros = Number(row.cost ?? 0)
      return {
        threadId: row.thread_id,
        actorRef: thread?.actor_ref ?? null,
        title: thread?.title ?? null,
        label: thread?.title ?? (thread ? 'Untitled thread' : 'Deleted thread'),
        deleted: !thread || thread.deleted_at !== null,
        runs: Number(row.runs),
        modelCalls: Number(row.model_calls),
        tokens: Number(row.tokens ?? 0),
        costMicros,
        cost: formatMicros(costMicros),
      }
    })
  }

  async reliability(window: DayWindow): Promise<ReliabilityOverview> {
    const [agents, days, errors, { overall, perAgent }, retries] = await Promise.all([
      this.#rollups(AGENT_TABLES.runRollups, window, RUN_COLUMNS, 'agent_name'),
      this.#rollups(AGENT_TABLES.runRollups, window, RUN_COLUMNS, 'day'),
      this.#rollups(AGENT_TABLES.errorRollups, window, { count: 'runs_failed' }, 'error_code'),
      this.#durationHistograms(window),
      this.#rollups(AGENT_TABLES.retryRollups, window, { retries: 'retries' }, 'agent_name'),
    ])
    const retriesOf = new Map<string, number>(
      retries.map((row: any) => [row.agent_name, Number(row.retries ?? 0)])
    )
    const total = { succeeded: 0, failed: 0, cancelled: 0 }
    for (const row of agents) {
      for (const field of Object.keys(total) as Array<keyof typeof total>) {
        total[field] += Number(row[field] ?? 0)
      }
    }
    const perDay = new Map(days.map((row: any) => [row.day, row]))
    return {
      from: window.fromDay,
      to: window.toDay,
      metrics: {
        ...runFigures(total),
        retries: [...retriesOf.values()].reduce((sum, count) => sum + count, 0),
        p95DurationMs: p95FromBuckets(overall),
      },
      byAgent: agents
        .map((row: any) => ({
          agentName: row.agent_name,
          ...runFigures(row),
          retries: retriesOf.get(row.agent_name) ?? 0,
          p95DurationMs: p95FromBuckets(perAgent.get(row.agent_name) ?? new Map()),
        }))
        .filter((row) => row.runs > 0)
        .sort((a, b) => b.runs - a.runs || a.agentName.localeCompare(b.agentName)),
      errors: errors
        .map((row: any) => ({ errorCode: String(row.error_code), count: Number(row.count ?? 0) }))
        .filter((row: { count: number }) => row.count > 0)
        .sort(
          (a: { errorCode: string; count: number }, b: { errorCode: string; count: number }) =>
            b.count - a.count || a.errorCode.localeCompare(b.errorCode)
        ),
      trend: daysOf(window).map((day) => ({ day, ...runFigures(perDay.get(day)) })),
    }
  }

  /** Run counts per duration bucket in the window: per agent, and all agents together */
  async #durationHistograms(window: DayWindow) {
    const rows = await this.#connect()
      .from(AGENT_TABLES.durationRollups)
      .where('day', '>=', window.fromDay)
      .where('day', '<=', window.toDay)
      .select('agent_name', 'bucket')
      .sum('runs as runs')
      .groupBy('agent_name', 'bucket')
    const overall = new Map<number, number>()
    const perAgent = new Map<string, Map<number, number>>()
    for (const row of rows) {
      const bucket = Number(row.bucket)
      const runs = Number(row.runs ?? 0)
      overall.set(bucket, (overall.get(bucket) ?? 0) + runs)
      if (!perAgent.has(row.agent_name)) perAgent.set(row.agent_name, new Map())
      perAgent.get(row.agent_name)!.set(bucket, runs)
    }
    return { overall, perAgent }
  }

  /** Calls per tool created in the window, most used first */
  async tools(window: DayWindow): Promise<ToolStatRow[]> {
    const client = this.#connect()
    const { from, to } = bounds(window)
    const createdInWindow = (query: any) =>
      query.where('created_at', '>=', from).where('created_at', '<', to)
    const counted = (status: string) =>
      client.raw(`sum(case when status = ? then 1 else 0 end) as ??`, [status, status])
    const rows = await createdInWindow(client.from(AGENT_TABLES.toolCalls))
      .groupBy('tool_name')
      .select('tool_name')
      .count('* as calls')
      .select(counted('failed'), counted('rejected'), counted('denied'))
    const durations = await nearestRankP95(client, {
      table: AGENT_TABLES.toolCalls,
      value: 'execution_ms',
      group: 'tool_name',
      where: createdInWindow,
    })
    const p95 = new Map(durations.map((row) => [row.group, row.p95]))
    return rows
      .map((row: any) => ({
        toolName: row.tool_name,
        calls: Number(row.calls),
        failed: Number(row.failed ?? 0),
        rejected: Number(row.rejected ?? 0),
        denied: Number(row.denied ?? 0),
        p95ExecutionMs: p95.get(row.tool_name) ?? null,
      }))
      .sort(
        (a: ToolStatRow, b: ToolStatRow) =>
          b.calls - a.calls || a.toolName.localeCompare(b.toolName)
      )
  }
}
