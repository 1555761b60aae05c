import { AgentThreadBusyException, AgentTransientThreadException } from '../errors.ts'
import type {
  AgentStore,
  MessageRow,
  RunOutcome,
  RunRow,
  ThreadRow,
  ThreadStore,
  ToolCallRow,
  TransientSnapshot,
  TransientThreadStore,
  TransientToolCall,
  TransientUsage,
  UsageInput,
} from '../store/contract.ts'

/**
 * One transient thread: its messages, runs, tool calls and priced usage in
 * memory, behind the same operations a stored thread offers. Rollup counts
 * go to the store at once and quota holds to the quota store, as for any
 * turn (they are the actor's, not the thread's); the rows are written only
 * by `promote()`.
 */
export class TransientThread implements ThreadStore {
  readonly thread: ThreadRow
  /** open, being written by a promote, or gone (promoted or deleted) */
  state: 'open' | 'promoting' | 'closed' = 'open'
  lastUsedAt = Date.now()
  #rows: TransientThreadStore
  #maxMessages: number
  #messages: MessageRow[] = []
  #runs = new Map<string, RunRow>()
  #toolCalls: TransientToolCall[] = []
  #usage: TransientUsage[] = []
  #nextMessageId = 1
  #nextToolCallId = 1

  constructor(
    store: AgentStore & { transient: TransientThreadStore },
    thread: ThreadRow,
    maxMessages: number
  ) {
    this.#rows = store.transient
    this.thread = thread
    this.#maxMessages = maxMessages
  }

  /** True while one of its runs has not ended */
  get running() {
    return [...this.#runs.values()].some((run) => run.status === 'running')
  }

  #assertOpen() {
    if (this.state !== 'open') {
      throw new AgentThreadBusyException(
        'This transient thread is being promoted: retry the request'
      )
    }
    this.lastUsedAt = Date.now()
  }

  async updateThread(_id: string, patch: { title?: string; defaultAgent?: string | null }) {
    this.#assertOpen()
    if (patch.title !== undefined) this.thread.title = patch.title
    if (patch.defaultAgent !== undefined) this.thread.defaultAgent = patch.defaultAgent
    this.thread.updatedAt = new Date()
  }

  /** Deleting a transient thread forgets it: there is nothing stored to keep */
  async softDeleteThread() {
    this.#assertOpen()
    this.state = 'closed'
  }

  async truncateFrom(_threadId: string, messageId: number) {
    this.#assertOpen()
    const index = this.#messages.findIndex((message) => message.id === messageId)
    if (index === -1) return false
    this.#messages.splice(index)
    return true
  }

  async appendMessage(input: Parameters<AgentStore['appendMessage']>[0]) {
    const row: MessageRow = {
      id: this.#nextMessageId++,
      threadId: this.thread.id,
      runId: input.runId,
      role: input.role,
      content: input.content,
      toolCalls: input.toolCalls?.length ? input.toolCalls : null,
      toolResults: input.toolResults?.length ? input.toolResults : null,
      followUps: null,
      attachments: input.attachments?.length ? input.attachments : null,
      createdAt: new Date(),
    }
    this.#messages.push(row)
    this.thread.updatedAt = row.createdAt
    return { ...row, toolCalls: input.toolCalls ?? null, toolResults: input.toolResults ?? null }
  }

  async setFollowUps(messageId: number, followUps: string[]) {
    const message = this.#messages.find((row) => row.id === messageId)
    if (message) message.followUps = followUps
  }

  async listMessages() {
    return this.#messages.map((message) => ({ ...message }))
  }

  /** A turn starts here: refused while a promote writes the thread, or once it is full */
  async createRun(input: Pick<RunRow, 'id' | 'threadId' | 'actorRef' | 'agentName'>) {
    this.#assertOpen()
    if (this.#messages.length >= this.#maxMessages) {
      throw new AgentTransientThreadException(
        `This transient thread holds ${this.#maxMessages} messages: promote it to continue`
      )
    }
    this.#runs.set(input.id, {
      ...input,
      status: 'running',
      errorCode: null,
      steps: 0,
      retries: 0,
      createdAt: new Date(),
      finishedAt: null,
      durationMs: null,
    })
  }

  async finishRun(id: string, outcome: RunOutcome) {
    const run = this.#runs.get(id)
    if (run?.status !== 'running') return
    const finishedAt = new Date()
    Object.assign(run, {
      status: outcome.status,
      errorCode: outcome.errorCode ?? null,
      steps: outcome.steps,
      retries: outcome.retries ?? 0,
      finishedAt,
      durationMs: run.createdAt
        ? Math.max(0, finishedAt.getTime() - run.createdAt.getTime())
        : null,
    })
    await this.#rows.countRunEnd(
      { actorRef: run.actorRef, agentName: run.agentName, model: outcome.model },
      {
        status: outcome.status,
        errorCode: outcome.errorCode ?? null,
        durationMs: run.durationMs,
        retries: run.retries,
      }
    )
  }

  async findRun(id: string) {
    const run = this.#runs.get(id)
    return run ? { ...run } : null
  }

  async claimToolCall(input: Parameters<AgentStore['claimToolCall']>[0]) {
    const existing = this.#toolCalls.find(
      (row) => row.runId === input.runId && row.toolCallId === input.toolCallId
    )
    if (existing) return { claimed: false as const, row: { ...existing } }
    const now = new Date()
    this.#toolCalls.push({
      id: this.#nextToolCallId++,
      runId: input.runId,
      threadId: input.threadId,
      actorRef: input.actorRef,
      toolCallId: input.toolCallId,
      toolName: input.toolName,
      status: input.status ?? 'running',
      input: input.input ?? null,
      output: null,
      errorCode: null,
      executionMs: null,
      createdAt: now,
      updatedAt: now,
    })
    return { claimed: true as const }
  }

  #toolCall(runId: string, toolCallId: string) {
    return this.#toolCalls.find((row) => row.runId === runId && row.toolCallId === toolCallId)
  }

  async finishToolCall(
    runId: string,
    toolCallId: string,
    outcome: Parameters<AgentStore['finishToolCall']>[2]
  ) {
    const row = this.#toolCall(runId, toolCallId)
    if (!row) return
    Object.assign(row, {
      status: outcome.status,
      output: outcome.output ?? null,
      errorCode: outcome.errorCode ?? null,
      executionMs: outcome.executionMs ?? null,
      updatedAt: new Date(),
    })
  }

  async listToolCalls(runId: string): Promise<ToolCallRow[]> {
    return this.#toolCalls.filter((row) => row.runId === runId).map((row) => ({ ...row }))
  }

  async markPendingApproval(runId: string, toolCallId: string) {
    const row = this.#toolCall(runId, toolCallId)
    if (row?.status === 'running') Object.assign(row, { status: 'pending_approval' })
  }

  async findToolCallsById(toolCallId: string): Promise<ToolCallRow[]> {
    return this.#toolCalls.filter((row) => row.toolCallId === toolCallId).map((row) => ({ ...row }))
  }

  /** The first decision wins, as the stored thread's conditional update */
  async decideApproval(id: number, approved: boolean, reason?: string) {
    const row = this.#toolCalls.find((candidate) => candidate.id === id)
    if (row?.status !== 'pending_approval') return false
    Object.assign(row, {
      status: approved ? 'approved' : 'rejected',
      ...(approved ? {} : { output: { error: 'rejected', reason: reason ?? null } }),
      updatedAt: new Date(),
    })
    return true
  }

  /** Priced and counted in the rollups now; the usage row waits for a promote */
  async recordUsage(input: UsageInput) {
    const createdAt = new Date()
    const row = await this.#rows.countUsage(input)
    this.#usage.push({ ...row, createdAt })
    return row
  }

  async listUsage(runId: string) {
    return this.#usage.filter((row) => row.runId === runId).map(({ createdAt, ...row }) => row)
  }

  /**
   * Writes the thread and everything it holds, once; false when it is not
   * open (already promoted, being promoted, or deleted). A run still
   * streaming would keep writing here after the snapshot, so it is refused.
   */
  async promote() {
    if (this.state !== 'open') return false
    if (this.running) {
      throw new AgentThreadBusyException(
        'A run of this transient thread is still streaming: promote it once the run ends'
      )
    }
    this.state = 'promoting'
    try {
      await this.#rows.save(this.#snapshot())
    } catch (error) {
      this.state = 'open'
      throw error
    }
    this.state = 'closed'
    return true
  }

  #snapshot(): TransientSnapshot {
    return {
      thread: { ...this.thread },
      messages: this.#messages,
      runs: [...this.#runs.values()],
      toolCalls: this.#toolCalls,
      usage: this.#usage,
    }
  }
}
