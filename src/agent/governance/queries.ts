import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { HANDOFF_TOOL_PREFIX, toolTypeOf } from '../handoff.ts'
import { AGENT_TABLES, toDate } from '../store/lucid.ts'

/** A day range, both ends inclusive, as `YYYY-MM-DD` */
export interface DayRange {
  fromDay?: string
  toDay?: string
}

export interface GovernancePage<Row> {
  rows: Row[]
  page: number
  pageSize: number
  total: number
}

export interface RecentRunRow {
  id: string
  threadId: string
  actorRef: string
  agentName: string
  status: string
  errorCode: string | null
  steps: number
  createdAt: string | null
  finishedAt: string | null
  durationMs: number | null
}

export interface ToolCallActivityRow {
  id: number
  toolCallId: string
  runId: string
  threadId: string
  actorRef: string
  toolName: string
  /** `handoff` for a call handing the task to another agent (`handoff_to_<name>`) */
  toolType: 'tool' | 'handoff'
  status: string
  errorCode: string | null
  executionMs: number | null
  createdAt: string | null
}

export interface ThreadActivityRowWithLabel {
  id: string
  actorRef: string
  title: string | null
  /** The title, or a stand-in for an untitled thread */
  label: string
  runs: number
  deleted: boolean
  createdAt: string | null
  updatedAt: string | null
}

export interface PendingApprovalRow {
  toolCallId: string
  runId: string
  threadId: string
  actorRef: string
  toolName: string
  input: unknown
  requestedAt: string | null
}

export type RunWhere = DayRange & { agentName?: string; status?: string; errorCode?: string }
export type ToolCallWhere = DayRange & {
  toolName?: string
  toolType?: string
  status?: string
  threadId?: string
}
export type ThreadWhere = DayRange & { actorRef?: string; title?: string }

function iso(value: unknown) {
  return toDate(value)?.toISOString() ?? null
}

/** Start of `fromDay` and start of the day after `toDay`, UTC */
function dayBounds(range: DayRange) {
  const next = range.toDay ? new Date(`${range.toDay}T00:00:00.000Z`) : undefined
  next?.setUTCDate(next.getUTCDate() + 1)
  return { from: range.fromDay ? new Date(`${range.fromDay}T00:00:00.000Z`) : undefined, to: next }
}

function applyDays(query: any, column: string, range: DayRange) {
  const { from, to } = dayBounds(range)
  if (from) query.where(column, '>=', from)
  if (to) query.where(column, '<', to)
  return query
}

function runRow(row: any): RecentRunRow {
  const createdAt = toDate(row.created_at)
  const finishedAt = toDate(row.finished_at)
  return {
    id: row.id,
    threadId: row.thread_id,
    actorRef: row.actor_ref,
    agentName: row.agent_name,
    status: row.status,
    errorCode: row.error_code,
    steps: Number(row.steps),
    createdAt: createdAt?.toISOString() ?? null,
    finishedAt: finishedAt?.toISOString() ?? null,
    durationMs: createdAt && finishedAt ? finishedAt.getTime() - createdAt.getTime() : null,
  }
}

function toolCallRow(row: any): ToolCallActivityRow {
  return {
    id: Number(row.id),
    toolCallId: row.tool_call_id,
    runId: row.run_id,
    threadId: row.thread_id,
    actorRef: row.actor_ref,
    toolName: row.tool_name,
    toolType: toolTypeOf(row.tool_name),
    status: row.status,
    errorCode: row.error_code,
    executionMs: row.execution_ms === null ? null : Number(row.execution_ms),
    createdAt: iso(row.created_at),
  }
}

/**
 * The governance API's reads over the gateway's tables. Lists are newest
 * first with the id as tiebreak, so pages never shift or repeat rows.
 */
export class LucidGovernanceQueries {
  #connect: () => QueryClientContract

  /** `connect` returns the connection's query client per query, as the store does */
  constructor(connect: () => QueryClientContract) {
    this.#connect = connect
  }

  get #client() {
    return this.#connect()
  }

  async #page<Row>(
    base: () => any,
    order: Array<[string, 'asc' | 'desc']>,
    page: number,
    pageSize: number,
    map: (row: any) => Row
  ): Promise<GovernancePage<Row>> {
    const [counted] = await base().count('* as total')
    let query = base()
    for (const [column, direction] of order) query = query.orderBy(column, direction)
    const rows = await query.offset((page - 1) * pageSize).limit(pageSize)
    return { rows: rows.map(map), page, pageSize, total: Number(counted.total) }
  }

  async recentRuns(limit: number) {
    const rows = await this.#client
      .from(AGENT_TABLES.runs)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
    return rows.map(runRow)
  }

  runsPage(page: number, pageSize: number, where: RunWhere) {
    const base = () => {
      const query = this.#client.from(AGENT_TABLES.runs)
      if (where.agentName !== undefined) query.where('agent_name', where.agentName)
      if (where.status !== undefined) query.where('status', where.status)
      if (where.errorCode !== undefined) query.where('error_code', where.errorCode)
      return applyDays(query, 'created_at', where)
    }
    return this.#page(
      base,
      [
        ['created_at', 'desc'],
        ['id', 'desc'],
      ],
      page,
      pageSize,
      runRow
    )
  }

  async recentToolCalls(limit: number) {
    const rows = await this.#client
      .from(AGENT_TABLES.toolCalls)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
    return rows.map(toolCallRow)
  }

  toolCallsPage(page: number, pageSize: number, where: ToolCallWhere) {
    const base = () => {
      const query = this.#client.from(AGENT_TABLES.toolCalls)
      if (where.toolName !== undefined) query.where('tool_name', where.toolName)
      if (where.status !== undefined) query.where('status', where.status)
      if (where.threadId !== undefined) query.where('thread_id', where.threadId)
      // A handoff is recorded under its tool name, which only handoffs may start with
      if (where.toolType === 'handoff') {
        query.whereRaw('substr(tool_name, 1, ?) = ?', [
          HANDOFF_TOOL_PREFIX.length,
          HANDOFF_TOOL_PREFIX,
        ])
      } else if (where.toolType === 'tool') {
        query.whereRaw('substr(tool_name, 1, ?) <> ?', [
          HANDOFF_TOOL_PREFIX.length,
          HANDOFF_TOOL_PREFIX,
        ])
      } else if (where.toolType !== undefined) {
        query.whereRaw('1 = 0')
      }
      return applyDays(query, 'created_at', where)
    }
    return this.#page(
      base,
      [
        ['created_at', 'desc'],
        ['id', 'desc'],
      ],
      page,
      pageSize,
      toolCallRow
    )
  }

  /** Threads with their run counts, counted for the listed threads only */
  async #withRuns(rows: any[]): Promise<ThreadActivityRowWithLabel[]> {
    const counts = new Map<string, number>()
    if (rows.length) {
      const counted = await this.#client
        .from(AGENT_TABLES.runs)
        .whereIn(
          'thread_id',
          rows.map((row) => row.id)
        )
        .groupBy('thread_id')
        .select('thread_id')
        .count('* as runs')
      for (const row of counted) counts.set(row.thread_id, Number(row.runs))
    }
    return rows.map((row) => ({
      id: row.id,
      actorRef: row.actor_ref,
      title: row.title,
      label: row.title ?? 'Untitled thread',
      runs: counts.get(row.id) ?? 0,
      deleted: row.deleted_at !== null,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
    }))
  }

  async recentThreads(limit: number) {
    const rows = await this.#client
      .from(AGENT_TABLES.threads)
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
    return this.#withRuns(rows)
  }

  async threadsPage(page: number, pageSize: number, where: ThreadWhere) {
    const base = () => {
      const query = this.#client.from(AGENT_TABLES.threads)
      if (where.actorRef !== undefined) query.where('actor_ref', where.actorRef)
      if (where.title !== undefined) {
        // Case-insensitive substring; % and _ in the search are literal
        const pattern = `%${where.title.toLowerCase().replace(/[!%_]/g, (c) => `!${c}`)}%`
        query.whereRaw(`lower(title) like ? escape '!'`, [pattern])
      }
      return applyDays(query, 'updated_at', where)
    }
    const result = await this.#page(
      base,
      [
        ['updated_at', 'desc'],
        ['id', 'desc'],
      ],
      page,
      pageSize,
      (row) => row
    )
    return { ...result, rows: await this.#withRuns(result.rows) }
  }

  /** Tool calls waiting for a decision, oldest first */
  async pendingApprovals(limit: number): Promise<PendingApprovalRow[]> {
    const rows = await this.#client
      .from(AGENT_TABLES.toolCalls)
      .where('status', 'pending_approval')
      .orderBy('updated_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
    return rows.map((row: any) => ({
      toolCallId: row.tool_call_id,
      runId: row.run_id,
      threadId: row.thread_id,
      actorRef: row.actor_ref,
      toolName: row.tool_name,
      input: row.input === null ? null : JSON.parse(row.input),
      requestedAt: iso(row.updated_at),
    }))
  }
}
