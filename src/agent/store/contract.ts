import type { LucidGovernanceQueries } from '../governance/queries.ts'
import type { LucidInsightQueries } from '../governance/insights.ts'
import type { ModelToolCall, TokenUsage } from '../model/port.ts'
import type { PricePer1m } from '../pricing/money.ts'
import type { QuotaStore } from '../quota/contract.ts'

/** The reads of the governance API (the Lucid store provides them) */
export type GovernanceQueries = {
  [Key in keyof LucidGovernanceQueries]: LucidGovernanceQueries[Key]
}

/** The governance API's aggregates: spend, top threads, reliability, tools */
export type InsightQueries = {
  [Key in keyof LucidInsightQueries]: LucidInsightQueries[Key]
}

/** One effective-dated price of a model, in micro-units per million tokens */
export interface ModelPriceRow extends PricePer1m {
  id: number
  modelId: string
  effectiveFrom: Date
}

/**
 * Effective-dated model prices. A price is never edited: a new one is a new
 * row effective from its insert, so costs already written never change.
 */
export interface PricingStore {
  /** The price in effect now for every priced model, by model id */
  current(): Promise<ModelPriceRow[]>
  /** Inserts a price effective now */
  setPrice(modelId: string, price: PricePer1m): Promise<ModelPriceRow>
  /** Prices from config/agent.ts, inserted for models that have no price row yet */
  useDefaults(defaults: Record<string, PricePer1m>): void
}

/** How a usage row's cost was found */
export type CostSource = 'reported' | 'estimated' | 'unpriced'

/** One conversation of one actor */
export interface ThreadRow {
  id: string
  actorRef: string
  title: string | null
  defaultAgent: string | null
  createdAt: Date | null
  updatedAt: Date | null
}

/** What a user message keeps about a file it carried: the bytes stay in the staging */
export interface MessageAttachment {
  id: string
  name: string
  contentType: string
  size: number
}

/** One message of a thread, in order */
export interface MessageRow {
  id: number
  threadId: string
  runId: string | null
  role: 'user' | 'assistant' | 'tool'
  content: string
  toolCalls: ModelToolCall[] | null
  toolResults: Array<{ toolCallId: string; toolName: string; output: unknown }> | null
  /** Follow-up questions proposed after an answer, when `followUps` is on */
  followUps: string[] | null
  /** The files a user message carried (`attachments` of the chat body) */
  attachments: MessageAttachment[] | null
  createdAt: Date | null
}

export type RunStatus = 'running' | 'done' | 'failed' | 'aborted'

/** One chat turn */
export interface RunRow {
  id: string
  threadId: string
  actorRef: string
  agentName: string
  status: RunStatus
  errorCode: string | null
  steps: number
  /** Model calls of the run the gateway sent again after a retryable failure */
  retries: number
  createdAt: Date | null
  finishedAt: Date | null
  durationMs: number | null
}

export type ToolCallStatus =
  | 'running'
  | 'pending_approval'
  | 'approved'
  | 'rejected'
  | 'succeeded'
  | 'failed'
  | 'denied'
  | 'skipped'

/** One execution of a tool, keyed by the model's tool-call id within its run */
export interface ToolCallRow {
  id: number
  runId: string
  threadId: string
  actorRef: string
  toolCallId: string
  toolName: string
  status: ToolCallStatus
  input: unknown
  output: unknown
  errorCode: string | null
  executionMs: number | null
}

/** One model call's usage, as the runner records it */
export interface UsageInput extends TokenUsage {
  runId: string
  threadId: string
  actorRef: string
  agentName: string
  model: string
  /** A step of the turn, or the extra call proposing follow-up questions */
  kind: 'step' | 'follow_ups'
  step: number
  day: string
}

/** One usage row per model call, priced when written */
export interface UsageRow extends UsageInput {
  /** The agent_pricing row the cost was estimated with */
  priceId: number | null
  /** Micro-units of the currency; 0 when unpriced */
  cost: number
  costSource: CostSource
}

/** How a run ended, as `finishRun` records it */
export interface RunOutcome {
  status: Exclude<RunStatus, 'running'>
  errorCode?: string | null
  steps: number
  /** The model label the run's usage rows carry: the key of its rollup */
  model: string
  /** Model calls retried during the run (0 when omitted) */
  retries?: number
}

/** How a transient run ended, as its rollups count it */
export type RunEnd = Pick<RunOutcome, 'status' | 'errorCode' | 'retries'> & {
  durationMs: number | null
}

/** A tool call as a transient thread keeps it, with the times its row will carry */
export interface TransientToolCall extends ToolCallRow {
  createdAt: Date
  updatedAt: Date
}

/** A priced model call of a transient thread, with the time its row will carry */
export interface TransientUsage extends UsageRow {
  createdAt: Date
}

/** Everything a transient thread holds, written at once when it is promoted */
export interface TransientSnapshot {
  thread: ThreadRow
  messages: MessageRow[]
  runs: RunRow[]
  toolCalls: TransientToolCall[]
  usage: TransientUsage[]
}

/**
 * What transient threads need of a store: their model calls and run ends
 * counted in the daily rollups without rows, and one write at promote.
 */
export interface TransientThreadStore {
  /** Prices a model call and adds it to its daily rollup; no usage row is written */
  countUsage(row: UsageInput): Promise<UsageRow>
  /** Counts a run's end, its error code and duration in today's rollups; no run row is written */
  countRunEnd(
    key: { actorRef: string; agentName: string; model: string },
    end: RunEnd
  ): Promise<void>
  /**
   * Writes the thread, its runs, messages, tool calls and usage rows in one
   * transaction, adding nothing to the rollups (they were counted already)
   */
  save(snapshot: TransientSnapshot): Promise<void>
}

/** A page of `GET /agent/threads` */
export interface ThreadPage {
  limit: number
  /** A thread id: the page starts after it */
  before?: string
}

/** What a turn writes when it starts */
export interface TurnStart {
  /** The stored thread the turn continues, or the new one it creates (its id chosen by the gateway) */
  thread: ThreadRow
  /** `thread` is new: it is inserted with the run */
  newThread: boolean
  run: Pick<RunRow, 'id' | 'actorRef' | 'agentName'>
  /** The user's message, stored under the run */
  question: { content: string; attachments?: MessageAttachment[] }
}

/**
 * Persistence of the gateway. The Lucid store (`stores.lucid()`) is the one
 * shipped; the interface is what another backend implements.
 */
export interface AgentStore {
  /** The governance API's reads; without them its routes answer 501 */
  governance?: GovernanceQueries
  /** The spend, reliability and tool aggregates; without them those routes answer 501 */
  insights?: InsightQueries
  /** Model prices; without them `/pricing` answers 501 and usage is recorded unpriced */
  pricing?: PricingStore
  /** Transient threads; without it a `transient` chat answers 501 */
  transient?: TransientThreadStore
  createThread(input: { actorRef: string; title: string | null }): Promise<ThreadRow>
  /** A live (not deleted) thread, or null */
  findThread(id: string): Promise<ThreadRow | null>
  /**
   * The actor's live threads, the most recently updated first (ties by id),
   * at most `page.limit`; with `page.before`, those after that thread in the
   * order (where it stands now). Null when `before` is no thread of the actor.
   */
  listThreads(actorRef: string, page: ThreadPage): Promise<ThreadRow[] | null>
  updateThread(id: string, patch: { title?: string; defaultAgent?: string | null }): Promise<void>
  softDeleteThread(id: string): Promise<void>
  /**
   * Which of `ids` a message of a live (not deleted) thread references in its
   * `attachments`; without it the gateway never deletes attachment bytes
   */
  attachmentsInUse?(ids: string[]): Promise<Set<string>>
  /** Deletes the thread's messages from `messageId` on; false when the message is not in it */
  truncateFrom(threadId: string, messageId: number): Promise<boolean>
  /**
   * A new thread of the same actor, title and default agent with copies of
   * the messages up to and including `messageId`; null when it is not in the thread
   */
  forkFrom(source: ThreadRow, messageId: number): Promise<ThreadRow | null>

  appendMessage(
    input: Omit<
      MessageRow,
      'id' | 'createdAt' | 'toolCalls' | 'toolResults' | 'followUps' | 'attachments'
    > &
      Partial<Pick<MessageRow, 'toolCalls' | 'toolResults' | 'attachments'>>
  ): Promise<MessageRow>
  /** Stores the follow-up questions proposed after an assistant message */
  setFollowUps(messageId: number, followUps: string[]): Promise<void>
  listMessages(threadId: string): Promise<MessageRow[]>

  createRun(input: Pick<RunRow, 'id' | 'threadId' | 'actorRef' | 'agentName'>): Promise<void>
  /**
   * The thread (when new), the run and the question, and the thread's
   * `updatedAt`, in one transaction: all of them or none. The gateway calls
   * it while the turn's first model call is on its way (it reads a stored
   * thread's messages before), so a store with it keeps its writes off the
   * time to the first token. Without it a turn calls `createThread`,
   * `createRun`, `appendMessage` and `listMessages` in turn before its model call.
   */
  startTurn?(input: TurnStart): Promise<void>
  /**
   * Records a running run's end, its duration and its daily rollups in one
   * transaction; a run that has already ended is left as it is.
   */
  finishRun(id: string, outcome: RunOutcome): Promise<void>
  findRun(id: string): Promise<RunRow | null>

  /**
   * Inserts the tool call as `running` unless one with the same
   * (runId, toolCallId) exists: then returns that row and nothing may run.
   */
  claimToolCall(
    input: Pick<ToolCallRow, 'runId' | 'threadId' | 'actorRef' | 'toolCallId' | 'toolName'> & {
      input: unknown
      status?: ToolCallStatus
    }
  ): Promise<{ claimed: true } | { claimed: false; row: ToolCallRow }>
  finishToolCall(
    runId: string,
    toolCallId: string,
    outcome: {
      status: Exclude<ToolCallStatus, 'running'>
      output: unknown
      errorCode?: string | null
      executionMs?: number | null
    }
  ): Promise<void>
  listToolCalls(runId: string): Promise<ToolCallRow[]>
  /** Moves a running call to `pending_approval` (before the stream announces it) */
  markPendingApproval(runId: string, toolCallId: string): Promise<void>
  /** Every recorded call with this model tool-call id (one per run that has it) */
  findToolCallsById(toolCallId: string): Promise<ToolCallRow[]>
  /**
   * One conditional update from `pending_approval` to `approved` or
   * `rejected`: true for the first decision, false for any later one.
   */
  decideApproval(id: number, approved: boolean, reason?: string): Promise<boolean>

  /**
   * Writes a usage row priced at the price in effect now (or the cost the
   * provider reported) and adds it to its daily rollups, in one transaction
   */
  recordUsage(row: UsageInput): Promise<UsageRow>
  listUsage(runId: string): Promise<UsageRow[]>

  /**
   * The built-in daily budget `quotaLimitTokens` uses, kept by this store;
   * without it only the `quota` option sets a budget
   */
  dailyQuota?(limitTokens: number): QuotaStore

  /** Checks at boot that the tables exist, naming the migration to run */
  assertReady(): Promise<void>
}

/**
 * The operations on one thread's rows a turn and the thread routes use. The
 * Lucid store provides them for stored threads; a transient thread keeps
 * them in memory until it is promoted.
 */
export type ThreadStore = Pick<
  AgentStore,
  | 'updateThread'
  | 'softDeleteThread'
  | 'truncateFrom'
  | 'appendMessage'
  | 'setFollowUps'
  | 'listMessages'
  | 'createRun'
  | 'finishRun'
  | 'findRun'
  | 'claimToolCall'
  | 'finishToolCall'
  | 'listToolCalls'
  | 'markPendingApproval'
  | 'findToolCallsById'
  | 'decideApproval'
  | 'recordUsage'
  | 'listUsage'
>
