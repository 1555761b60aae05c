import { randomUUID } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import debug from './debug.ts'
import {
  AgentForbiddenException,
  AgentInvalidRequestException,
  AgentNotFoundException,
  AgentUnauthenticatedException,
} from './errors.ts'
import { ApprovalWaiters } from './approvals.ts'
import type { AttachmentInput } from './attachments/requests.ts'
import { stageAttachments } from './attachments/resolve.ts'
import { ToolCallDecisions } from './decisions.ts'
import { RunEventLog, type RunFrame, type RunReader } from './run_log.ts'
import { TurnRunner } from './runner.ts'
import { STORED, startTurn } from './turn_start.ts'
import { afterStored } from './store/after_stored.ts'
import type { RunRow, ThreadRow, ThreadStore } from './store/contract.ts'
import { TransientThreads } from './transient/registry.ts'
import type { AgentActor, ResolvedAgent, ResolvedAgentConfig } from './types.ts'

/** A run this process is executing or recently finished */
interface LiveRun {
  log: RunEventLog
  controller: AbortController
  threadId: string
  done: Promise<void>
}

/** What `POST /agent/chat` accepts, once validated */
export interface ChatRequest {
  /** Absent only on a regenerate, which answers the stored question */
  message?: string
  threadId?: string
  agent?: string
  /** Answer the thread's last user message again, dropping what followed it */
  regenerate?: boolean
  /** Start a thread that is kept in memory until it is promoted */
  transient?: boolean
  /** What the page the user is on says, sent to the model with this turn only */
  pageContext?: Record<string, unknown>
  /** Files the message carries, validated against the limits but not yet staged */
  attachments?: AttachmentInput[]
}

/**
 * What 'atrium.agent' resolves to: the agent registry, the runs in flight
 * with their event logs, and the ownership-checked operations the routes
 * call.
 */
export class AgentManager {
  readonly config: ResolvedAgentConfig
  #app: ApplicationService
  #runner: TurnRunner
  #runs = new Map<string, LiveRun>()
  #timers = new Set<NodeJS.Timeout>()
  #approvals = new ApprovalWaiters()
  #transient: TransientThreads
  #decisions: ToolCallDecisions
  /** Closers of the open governance `/stream` connections */
  #liveStreams = new Set<() => void>()

  constructor(app: ApplicationService, config: ResolvedAgentConfig) {
    this.#app = app
    this.config = config
    this.#runner = new TurnRunner(app, config)
    this.#transient = new TransientThreads(config.store)
    this.#decisions = new ToolCallDecisions(config, this.#approvals, this.#transient)
    // Cancels and decisions taken on other instances, for the runs this one executes
    config.sink?.onControl((message) => {
      if (message.type === 'cancel') {
        const live = this.#runs.get(message.runId)
        if (live && !live.log.finished) live.controller.abort(new Error('cancelled'))
      } else {
        this.#approvals.resolve(message.runId, message.toolCallId, {
          approved: message.approved,
          reason: message.reason,
        })
      }
    })
    // A run whose instance died is ended even when nobody comes back to read it
    config.sink?.sweepLapsed(async (runId) => {
      const run = await config.store.findRun(runId)
      if (run?.status === 'running') await this.#recordLapsed(run)
    })
  }

  /** The agents for a picker; `isDefault` marks the one used when none is chosen */
  catalog() {
    return this.config.agents.map((agent) => ({
      name: agent.name,
      description: agent.description,
      ...(agent.name === this.config.defaultAgent ? { isDefault: true } : {}),
    }))
  }

  agent(name: string): ResolvedAgent | undefined {
    return this.config.agents.find((agent) => agent.name === name)
  }

  /** The acting actor, or 401 */
  async actor(ctx: HttpContext): Promise<AgentActor> {
    const actor = await this.config.actorResolver(ctx)
    if (!actor || typeof actor.id !== 'string' || !actor.id) {
      throw new AgentUnauthenticatedException()
    }
    return actor
  }

  /**
   * A live thread the actor owns, stored or transient: 404 when unknown or
   * deleted, 403 when another's
   */
  async ownedThread(actor: AgentActor, threadId: string): Promise<ThreadRow> {
    const thread =
      this.#transient.get(threadId)?.thread ?? (await this.config.store.findThread(threadId))
    if (!thread) throw new AgentNotFoundException('thread')
    if (thread.actorRef !== actor.id) throw new AgentForbiddenException('thread')
    return thread
  }

  /** Where a thread's rows are: the memory of a transient thread, else the store */
  storeOf(thread: ThreadRow): ThreadStore {
    return this.#transient.get(thread.id) ?? this.config.store
  }

  /** True for a thread kept in memory until it is promoted */
  isTransient(thread: ThreadRow) {
    return this.#transient.get(thread.id) !== undefined
  }

  /** A run the actor owns, stored or of a transient thread: 404 when unknown, 403 when another's */
  async ownedRun(actor: AgentActor, runId: string): Promise<RunRow> {
    const run = (await this.config.store.findRun(runId)) ?? (await this.#transient.findRun(runId))
    if (!run) throw new AgentNotFoundException('run')
    if (run.actorRef !== actor.id) throw new AgentForbiddenException('run')
    return run
  }

  /**
   * Writes a transient thread with everything it holds; `{ ok: false }` for
   * a thread that is already stored (or being written by another promote).
   */
  async promote(actor: AgentActor, threadId: string) {
    const thread = await this.ownedThread(actor, threadId)
    const transient = this.#transient.get(thread.id)
    if (!transient) return { ok: false }
    const ok = await transient.promote()
    if (ok) this.#transient.forget(thread.id)
    debug('thread %s promoted: %s', thread.id, ok)
    return { ok }
  }

  /**
   * Starts a turn and returns at once with its event log. The run goes on
   * without any reader: a dropped connection is not a cancel.
   */
  async startChat(actor: AgentActor, request: ChatRequest) {
    const existing = request.threadId ? await this.ownedThread(actor, request.threadId) : null
    if (request.transient && existing && !this.isTransient(existing)) {
      throw new AgentInvalidRequestException(
        '"transient" starts a new thread: this thread is already stored',
        'transient'
      )
    }
    // The agent is settled before anything is written: a refused chat leaves no thread
    const agent = this.#chooseAgent(request.agent, existing?.defaultAgent ?? null)
    const attachments = request.attachments
      ? await stageAttachments(this.config.attachments, actor, request.attachments)
      : undefined
    const runId = randomUUID()
    const { thread, store, history, stored } = await startTurn(
      { store: this.config.store, transient: this.#transient },
      actor,
      request,
      existing,
      { id: runId, agentName: agent.name },
      attachments
    )

    const log = new RunEventLog(runId, actor.id, this.config.sse.maxFramesPerRun)
    log.append({ event: 'meta', data: { runId, threadId: thread.id } })
    const controller = new AbortController()
    // The run starts before its rows are stored (see startTurn): its own writes wait for them
    const done = this.#runner
      .run({
        runId,
        thread,
        actor,
        agent,
        log,
        signal: controller.signal,
        approvals: this.#approvals,
        store: stored === STORED ? store : afterStored(store, stored),
        stored,
        history,
        pageContext: request.pageContext,
      })
      .catch((error) => debug('run %s crashed: %s', runId, (error as Error)?.name))
      .finally(() => {
        // Every reader must see an end, even when the store failed mid-run
        if (!log.finished) {
          log.append({ event: 'error', data: { code: 'run_failed', message: 'The run failed' } })
        }
        const timer = setTimeout(() => {
          this.#runs.delete(runId)
          this.#timers.delete(timer)
        }, this.config.sse.retainFinishedMs)
        timer.unref()
        this.#timers.add(timer)
      })
    this.#runs.set(runId, { log, controller, threadId: thread.id, done })
    try {
      await stored
    } catch (error) {
      // Nothing of the turn was stored: its model call stops, and the chat fails as the write did
      controller.abort(error)
      throw error
    }
    // With the Redis sink every frame is mirrored there, under this instance's lease
    this.config.sink?.produce(log, {
      onCancel: () => controller.abort(new Error('cancelled')),
      onLeaseLost: () => controller.abort(new Error('lease lost')),
    })
    debug('run %s started (agent %s)', runId, agent.name)
    return { runId, threadId: thread.id, log }
  }

  /** The chat body's agent, else the thread's default, else the configured default */
  #chooseAgent(requested: string | undefined, threadDefault: string | null): ResolvedAgent {
    const names = this.config.agents.map((known) => known.name).join(', ')
    if (requested !== undefined) {
      const chosen = this.agent(requested)
      if (!chosen) {
        throw new AgentInvalidRequestException(
          `Unknown agent "${requested}": use one of ${names}`,
          'agent'
        )
      }
      return chosen
    }
    const chosen = this.agent(threadDefault ?? this.config.defaultAgent)
    if (!chosen) {
      throw new AgentInvalidRequestException(
        `No agent chosen: send "agent" (one of ${names}), or set "defaultAgent" in config/agent.ts`,
        'agent'
      )
    }
    return chosen
  }

  /**
   * The frames of a run the actor owns: this process's in-memory log, else
   * the Redis run log (another instance runs it), else null.
   */
  async runLog(actor: AgentActor, runId: string): Promise<{ log: RunReader | null; run: RunRow }> {
    const run = await this.ownedRun(actor, runId)
    const local = this.#runs.get(runId)?.log
    if (local || !this.config.sink) return { log: local ?? null, run }
    return { log: await this.#remoteReader(run), run }
  }

  /** A reader of the Redis run log; a reader that sees the lease lapse records the run failed */
  #remoteReader(run: RunRow) {
    return this.config.sink!.reader(run.id, () => this.#recordLapsed(run))
  }

  /** Records a run whose instance stopped renewing its lease as failed */
  #recordLapsed(run: RunRow) {
    return this.config.store.finishRun(run.id, {
      status: 'failed',
      errorCode: 'run_failed',
      steps: run.steps,
      model: this.agent(run.agentName)?.model ?? this.config.model.label,
    })
  }

  /**
   * Cancels a run in flight, here or (with the Redis sink) on the instance
   * running it; `aborted` is false when it had already ended.
   */
  async cancel(actor: AgentActor, runId: string) {
    const run = await this.ownedRun(actor, runId)
    const live = this.#runs.get(runId)
    if (run.status !== 'running' || live?.log.finished) return { aborted: false }
    if (live) {
      live.controller.abort(new Error('cancelled'))
      await live.done
      return { aborted: true }
    }
    const reader = this.config.sink ? await this.#remoteReader(run) : null
    if (!reader) return { aborted: false }
    await this.config.sink!.requestCancel(runId)
    // The answer waits for the run's closing frame, as a local cancel waits for the run
    const last = await new Promise<RunFrame | null>((resolve) => {
      let latest: RunFrame | null = null
      reader.follow(reader.lastSeq - 1, (frame) => {
        if (frame) latest = frame
        else resolve(latest)
      })
    })
    return { aborted: last?.event === 'done' && last.data.aborted === true }
  }

  /**
   * Approves or rejects a tool call waiting for approval. The run is found
   * from the tool-call id; the first decision wins (one conditional update)
   * and any later one answers `{ ok: false }`.
   */
  decide(actor: AgentActor, toolCallId: string, approved: boolean, reason?: string) {
    return this.#decisions.decide(actor, toolCallId, approved, reason)
  }

  /**
   * A decision from the governance API, which its own authorization
   * guards: any actor's call. Null when no call has the id.
   */
  decideFromDashboard(toolCallId: string, approved: boolean, reason?: string) {
    return this.#decisions.decideFromDashboard(toolCallId, approved, reason)
  }

  /** Registers an open live stream to end at shutdown; returns the unregister */
  onShutdown(close: () => void) {
    this.#liveStreams.add(close)
    return () => {
      this.#liveStreams.delete(close)
    }
  }

  /** Waits for a run of this process to end (tests, shutdown) */
  async settled(runId: string) {
    await this.#runs.get(runId)?.done
  }

  /** Aborts every run in flight and waits for them to record their end */
  async shutdown() {
    for (const close of [...this.#liveStreams]) close()
    const pending = [...this.#runs.values()].filter((run) => !run.log.finished)
    for (const run of pending) run.controller.abort(new Error('shutdown'))
    await Promise.allSettled(pending.map((run) => run.done))
    // The closing frames reach Redis before its connections close
    if (this.config.sink) {
      await this.config.sink.flush()
      this.config.sink.close()
    }
    await this.config.quota?.store.close?.()
    for (const timer of this.#timers) clearTimeout(timer)
    this.#timers.clear()
    this.#runs.clear()
  }

  get app() {
    return this.#app
  }
}
