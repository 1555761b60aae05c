import { randomUUID } from 'node:crypto'
import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { AgentConfigException } from '../errors.ts'
import { withoutNul } from '../../shared/nul.ts'
import { AGENT_TABLES, json, message, parse, run, thread, turnStartRows } from './lucid_rows.ts'
import { UsageLedger } from './lucid_ledger.ts'
import { LucidToolCalls } from './lucid_tool_calls.ts'
import { LucidPricingStore } from './lucid_pricing.ts'
import { LucidTransientThreads } from './lucid_transient.ts'
import { LucidQuotaStore } from '../quota/lucid.ts'
import { SqliteLedgerStatements } from './sqlite_ledger.ts'
import { startTurnOnPostgres } from './pg_turn.ts'
import { SqliteTurnStatements, type MessageInsert } from './sqlite_turn.ts'
import type {
  AgentStore,
  GovernanceQueries,
  InsightQueries,
  MessageRow,
  RunOutcome,
  RunRow,
  UsageInput,
  ThreadPage,
  ThreadRow,
  TurnStart,
} from './contract.ts'

export { AGENT_TABLES, toDate } from './lucid_rows.ts'

/**
 * The agent store on Lucid: one class for SQLite, PostgreSQL and MariaDB.
 * Every statement is portable; the one conditional write (claiming a tool
 * call) relies on the unique (run_id, tool_call_id) index, not on a dialect
 * feature. On better-sqlite3 the statements of a turn before its first
 * model call, and the usage rows, run ends and rollups after it, run as
 * cached prepared statements, and on PostgreSQL a turn's rows and a quota
 * reservation are each one named prepared statement (`preparedStatements:
 * false` turns all of them off, for poolers that do not keep prepared
 * statements), writing the same rows.
 */
export class LucidAgentStore implements AgentStore {
  #db: Database
  #connection?: string
  #ledger: UsageLedger
  #toolCalls: LucidToolCalls
  #preparedStatements: boolean
  /** Decided on first use, once the connection is known: null off better-sqlite3 */
  #statements?: { turn: SqliteTurnStatements; ledger: SqliteLedgerStatements } | null
  governance?: GovernanceQueries
  insights?: InsightQueries
  pricing: LucidPricingStore
  transient: LucidTransientThreads

  constructor(db: Database, connection?: string, options: { preparedStatements?: boolean } = {}) {
    this.#db = db
    this.#connection = connection
    this.#preparedStatements = options.preparedStatements ?? true
    this.pricing = new LucidPricingStore(() => this.#client)
    this.#ledger = new UsageLedger(() => this.#client, this.pricing)
    this.#toolCalls = new LucidToolCalls(() => this.#client)
    this.transient = new LucidTransientThreads(() => this.#client, this.#ledger)
  }

  get #client(): QueryClientContract {
    return this.#db.connection(this.#connection)
  }

  /** The prepared statements of a turn and of its ledger writes, on better-sqlite3 only */
  get #prepared() {
    if (this.#statements === undefined) {
      const turn = this.#preparedStatements
        ? SqliteTurnStatements.forClient(() => this.#client)
        : undefined
      this.#statements = turn
        ? { turn, ledger: new SqliteLedgerStatements(() => this.#client) }
        : null
    }
    return this.#statements ?? undefined
  }

  get #turn() {
    return this.#prepared?.turn
  }

  async assertReady() {
    for (const table of Object.values(AGENT_TABLES)) {
      if (!(await this.#client.schema.hasTable(table))) {
        throw new AgentConfigException(
          `Missing table "${table}" for the agent gateway. Run "node ace configure adonis-atrium --features=agent" to publish its migrations, then "node ace migration:run"`
        )
      }
    }
    if (!(await this.#client.schema.hasColumn(AGENT_TABLES.messages, 'attachments'))) {
      throw new AgentConfigException(
        `Missing column "attachments" of "${AGENT_TABLES.messages}" for the agent gateway. Run "node ace configure adonis-atrium --features=agent" to publish its migration (*_alter_agent_messages_attachments_table.ts), then "node ace migration:run"`
      )
    }
  }

  async createThread(input: { actorRef: string; title: string | null }) {
    const now = new Date()
    const row = {
      id: randomUUID(),
      actor_ref: input.actorRef,
      title: input.title,
      default_agent: null,
      created_at: now,
      updated_at: now,
    }
    if (this.#turn) await this.#turn.insertThread(row)
    else await this.#client.insertQuery().table(AGENT_TABLES.threads).insert(row)
    return thread(row)
  }

  async findThread(id: string) {
    const row = this.#turn
      ? await this.#turn.findThread(id)
      : await this.#client
          .from(AGENT_TABLES.threads)
          .where('id', id)
          .whereNull('deleted_at')
          .first()
    return row ? thread(row) : null
  }

  async listThreads(actorRef: string, page: ThreadPage) {
    const query = this.#client
      .from(AGENT_TABLES.threads)
      .where('actor_ref', actorRef)
      .whereNull('deleted_at')
    if (page.before !== undefined) {
      // a deleted thread still has its place, so a page can start after one deleted since
      const cursor = await this.#client
        .from(AGENT_TABLES.threads)
        .where('id', page.before)
        .where('actor_ref', actorRef)
        .select('id', 'updated_at')
        .first()
      if (!cursor) return null
      query.where((older) =>
        older
          .where('updated_at', '<', cursor.updated_at)
          .orWhere((tied) =>
            tied.where('updated_at', cursor.updated_at).where('id', '<', cursor.id)
          )
      )
    }
    const rows = await query.orderBy('updated_at', 'desc').orderBy('id', 'desc').limit(page.limit)
    return rows.map(thread)
  }

  async updateThread(id: string, patch: { title?: string; defaultAgent?: string | null }) {
    const values: Record<string, unknown> = { updated_at: new Date() }
    if (patch.title !== undefined) values.title = patch.title
    if (patch.defaultAgent !== undefined) values.default_agent = patch.defaultAgent
    await this.#client.from(AGENT_TABLES.threads).where('id', id).update(values)
  }

  async softDeleteThread(id: string) {
    const now = new Date()
    await this.#client
      .from(AGENT_TABLES.threads)
      .where('id', id)
      .whereNull('deleted_at')
      .update({ deleted_at: now, updated_at: now })
  }

  async attachmentsInUse(ids: string[]) {
    const inUse = new Set<string>()
    const unique = [...new Set(ids)]
    // One query per hundred ids keeps each statement's OR list short
    for (let start = 0; start < unique.length; start += 100) {
      const wanted = new Set(unique.slice(start, start + 100))
      const rows = await this.#client
        .from(`${AGENT_TABLES.messages} as m`)
        .join(`${AGENT_TABLES.threads} as t`, 't.id', 'm.thread_id')
        .whereNull('t.deleted_at')
        .whereNotNull('m.attachments')
        .where((query) => {
          for (const id of wanted) query.orWhere('m.attachments', 'like', likeAttachmentId(id))
        })
        .select('m.attachments')
      for (const row of rows) {
        for (const attachment of (parse(row.attachments) ?? []) as { id?: unknown }[]) {
          if (typeof attachment?.id === 'string' && wanted.has(attachment.id)) {
            inUse.add(attachment.id)
          }
        }
      }
    }
    return inUse
  }

  async truncateFrom(threadId: string, messageId: number) {
    return this.#client.transaction(async (trx) => {
      const found = await trx
        .from(AGENT_TABLES.messages)
        .where('thread_id', threadId)
        .where('id', messageId)
        .first()
      if (!found) return false
      await trx
        .from(AGENT_TABLES.messages)
        .where('thread_id', threadId)
        .where('id', '>=', messageId)
        .delete()
      await trx.from(AGENT_TABLES.threads).where('id', threadId).update({ updated_at: new Date() })
      return true
    })
  }

  async forkFrom(source: ThreadRow, messageId: number) {
    return this.#client.transaction(async (trx) => {
      const rows = await trx
        .from(AGENT_TABLES.messages)
        .where('thread_id', source.id)
        .where('id', '<=', messageId)
        .orderBy('id', 'asc')
      if (!rows.length || Number(rows.at(-1).id) !== messageId) return null
      const now = new Date()
      const forked = {
        id: randomUUID(),
        actor_ref: source.actorRef,
        title: source.title,
        default_agent: source.defaultAgent,
        created_at: now,
        updated_at: now,
      }
      await trx.insertQuery().table(AGENT_TABLES.threads).insert(forked)
      // Copies keep their order (ids ascend with the insert) and their original times
      await trx
        .insertQuery()
        .table(AGENT_TABLES.messages)
        .multiInsert(
          rows.map((row: any) => ({
            thread_id: forked.id,
            run_id: row.run_id,
            role: row.role,
            content: row.content,
            tool_calls: row.tool_calls,
            tool_results: row.tool_results,
            follow_ups: row.follow_ups,
            attachments: row.attachments,
            created_at: row.created_at,
          }))
        )
      return thread(forked)
    })
  }

  async appendMessage(input: Parameters<AgentStore['appendMessage']>[0]): Promise<MessageRow> {
    const createdAt = new Date()
    const row = {
      thread_id: input.threadId,
      run_id: input.runId,
      role: input.role,
      content: withoutNul(input.content),
      tool_calls: input.toolCalls?.length ? json(input.toolCalls) : null,
      tool_results: input.toolResults?.length ? json(input.toolResults) : null,
      attachments: input.attachments?.length ? json(input.attachments) : null,
      created_at: createdAt,
    }
    return {
      id: await this.#insertMessage(row),
      threadId: input.threadId,
      runId: input.runId,
      role: input.role,
      content: input.content,
      toolCalls: input.toolCalls ?? null,
      toolResults: input.toolResults ?? null,
      followUps: null,
      attachments: input.attachments?.length ? input.attachments : null,
      createdAt,
    }
  }

  async #insertMessage(row: MessageInsert, client = this.#client) {
    if (this.#turn) return this.#turn.appendMessage(row)
    const [inserted] = await client
      .insertQuery()
      .table(AGENT_TABLES.messages)
      .insert(row)
      .returning('id')
    await client
      .from(AGENT_TABLES.threads)
      .where('id', row.thread_id)
      .update({ updated_at: row.created_at })
    return Number(typeof inserted === 'object' ? (inserted as any).id : inserted)
  }

  async startTurn(input: TurnStart) {
    const rows = turnStartRows(input)
    if (this.#turn) return this.#turn.startTurn(rows)
    if (this.#preparedStatements && this.#client.dialect.name === 'postgres') {
      return startTurnOnPostgres(this.#client, rows)
    }
    await this.#client.transaction(async (trx) => {
      if (rows.thread) await trx.insertQuery().table(AGENT_TABLES.threads).insert(rows.thread)
      await trx.insertQuery().table(AGENT_TABLES.runs).insert(rows.run)
      await this.#insertMessage(rows.question, trx)
    })
  }

  async setFollowUps(messageId: number, followUps: string[]) {
    await this.#client
      .from(AGENT_TABLES.messages)
      .where('id', messageId)
      .update({ follow_ups: json(followUps) })
  }

  async listMessages(threadId: string) {
    const rows = this.#turn
      ? await this.#turn.listMessages(threadId)
      : await this.#client
          .from(AGENT_TABLES.messages)
          .where('thread_id', threadId)
          .orderBy('id', 'asc')
    return rows.map(message)
  }

  async createRun(input: Pick<RunRow, 'id' | 'threadId' | 'actorRef' | 'agentName'>) {
    const row = {
      id: input.id,
      thread_id: input.threadId,
      actor_ref: input.actorRef,
      agent_name: input.agentName,
      status: 'running',
      steps: 0,
      created_at: new Date(),
    }
    if (this.#turn) await this.#turn.insertRun(row)
    else await this.#client.insertQuery().table(AGENT_TABLES.runs).insert(row)
  }

  async finishRun(id: string, outcome: RunOutcome) {
    const prepared = this.#prepared
    if (prepared) return prepared.ledger.finishRun(id, outcome)
    return this.#ledger.finishRun(id, outcome)
  }

  async findRun(id: string) {
    const row = await this.#client.from(AGENT_TABLES.runs).where('id', id).first()
    return row ? run(row) : null
  }

  claimToolCall(input: Parameters<AgentStore['claimToolCall']>[0]) {
    return this.#toolCalls.claim(input)
  }

  finishToolCall(
    runId: string,
    toolCallId: string,
    outcome: Parameters<AgentStore['finishToolCall']>[2]
  ) {
    return this.#toolCalls.finish(runId, toolCallId, outcome)
  }

  markPendingApproval(runId: string, toolCallId: string) {
    return this.#toolCalls.markPendingApproval(runId, toolCallId)
  }

  findToolCallsById(toolCallId: string) {
    return this.#toolCalls.findById(toolCallId)
  }

  decideApproval(id: number, approved: boolean, reason?: string) {
    return this.#toolCalls.decideApproval(id, approved, reason)
  }

  listToolCalls(runId: string) {
    return this.#toolCalls.list(runId)
  }

  async recordUsage(row: UsageInput) {
    const prepared = this.#prepared
    if (!prepared) return this.#ledger.recordUsage(row)
    await this.pricing.ensureSeeded()
    return prepared.ledger.recordUsage(row)
  }

  /** The `agent_quota` table on this store's connection */
  dailyQuota(limitTokens: number) {
    return new LucidQuotaStore(() => this.#client, limitTokens, {
      preparedStatements: this.#preparedStatements,
    })
  }

  listUsage(runId: string) {
    return this.#ledger.listUsage(runId)
  }
}

/**
 * A LIKE pattern finding messages whose attachments may include `id`: its
 * backslashes and percent signs become `_` (any one character), so the
 * pattern only ever matches more rows, and the parsed JSON decides
 */
function likeAttachmentId(id: string) {
  return `%"id":${JSON.stringify(id).replace(/[\\%]/g, '_')}%`
}
