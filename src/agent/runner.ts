import type { ApplicationService } from '@adonisjs/core/types'
import debug from './debug.ts'
import { publishAgentEvent } from './diagnostics.ts'
import { withAttachmentBytes } from './attachments/resolve.ts'
import { buildSystemPrompt, historyOf, withPageContext } from './prompt.ts'
import { RetrievalFailedError, turnRetrieval } from './retrieval.ts'
import { dispatchHandoff, handoffTargets, handoffToolSpec } from './handoff.ts'
import { FOLLOW_UPS_SYSTEM, followUpMessages, parseFollowUps } from './follow_ups.ts'
import type {
  ModelMessage,
  ModelStepEvent,
  ModelStepRequest,
  ModelToolCall,
  TokenUsage,
} from './model/port.ts'
import { UNKNOWN_USAGE } from './model/port.ts'
import type { QuotaHold } from './quota/contract.ts'
import { dayIn } from './quota/day.ts'
import { streamWithRetries } from './model/retry.ts'
import { holdSize } from './quota/estimate.ts'
import { QuotaExceededError, endHold, holdQuota, keepHold } from './quota/holds.ts'
import type { MessageRow, RunOutcome, UsageInput } from './store/contract.ts'
import { ToolExecutor } from './tool_executor.ts'
import type { AgentActor, ResolvedAgent, ResolvedAgentConfig, ResolvedTool } from './types.ts'
import {
  today,
  type AgentPass,
  type StepBudget,
  type ToolResult,
  type TurnRequest,
} from './turn.ts'

/**
 * The gateway's own loop: one model step at a time; every tool call comes
 * back here (role gate, timeout, persistence) before the next step, up to
 * the agent's `maxSteps`. Frames go to the run's event log only.
 */
export class TurnRunner {
  #app: ApplicationService
  #config: ResolvedAgentConfig
  #executor: ToolExecutor

  constructor(app: ApplicationService, config: ResolvedAgentConfig) {
    this.#app = app
    this.#config = config
    this.#executor = new ToolExecutor(app, config.rolesPolicy, config.toolTimeoutMs)
  }

  /**
   * An unexpected failure is logged with the error's name and message only:
   * a model API error carries the request body, the conversation itself.
   * Never throws: the run must still be recorded and its stream ended.
   */
  async #reportFailure(runId: string, error: unknown) {
    const { name, message } = (error ?? {}) as Partial<Error>
    debug('run %s failed: %s %s', runId, name, message)
    try {
      const logger: any = await this.#app.container.make('logger')
      logger.error({ runId, error: { name, message } }, 'atrium agent: run failed')
    } catch {
      // no logger, or one that throws: the debug line above is all there is
    }
  }

  /** Tools of the agent's allow-list that the roles policy lets this actor use */
  async toolsFor(agent: ResolvedAgent, actor: AgentActor) {
    const allowed = new Map<string, ResolvedTool>()
    const declared: ResolvedTool[] = []
    for (const tool of this.#config.tools) {
      if (agent.tools && !agent.tools.includes(tool.spec.name)) continue
      allowed.set(tool.spec.name, tool)
      const permitted = await this.#config.rolesPolicy({
        actor,
        toolName: tool.spec.name,
        roles: tool.spec.roles,
      })
      if (permitted) declared.push(tool)
    }
    return { allowed, declared }
  }

  async run(request: TurnRequest): Promise<void> {
    const { runId, thread, actor, agent, log, signal, store } = request
    const model = agent.model ?? this.#config.model.label
    // One budget for the run: an agent handed a task spends the steps of the turn's agent
    const budget: StepBudget = {
      used: 0,
      limit: agent.maxSteps,
      quotaDay: dayIn(this.#config.quotaTimeZone),
      retries: 0,
    }
    // Announced once its row exists; a turn whose rows could not be stored never started
    request.stored.then(
      () =>
        publishAgentEvent('run.started', {
          runId,
          threadId: thread.id,
          actorRef: actor.id,
          agentName: agent.name,
        }),
      () => {}
    )
    // The store records the end first, so a subscriber reading the run sees it finished
    const finish = async (outcome: Omit<RunOutcome, 'model' | 'steps' | 'retries'>) => {
      await store.finishRun(runId, {
        ...outcome,
        steps: budget.used,
        model,
        retries: budget.retries,
      })
      publishAgentEvent('run.finished', {
        runId,
        threadId: thread.id,
        agentName: agent.name,
        status: outcome.status,
        errorCode: outcome.errorCode ?? null,
        steps: budget.used,
      })
    }
    try {
      const history = request.history ?? historyOf(await store.listMessages(thread.id))
      let answer: MessageRow | null = null
      const retrieved = await turnRetrieval(
        this.#config.retrieval,
        history,
        { runId, actor, threadId: thread.id, agentName: agent.name },
        signal
      )
      const withBytes = await withAttachmentBytes(this.#config.attachments, history)
      const messages = withPageContext(withBytes, request.pageContext)
      await this.#steps(request, budget, {
        agent,
        depth: 0,
        messages,
        retrieved,
        onDelta: (text) => log.append({ data: { delta: text } }),
        onStep: async (text, calls) => {
          const appended = await store.appendMessage({
            threadId: thread.id,
            runId,
            role: 'assistant',
            content: text,
            toolCalls: calls,
          })
          answer = calls.length ? null : appended
        },
        onResults: async (results) => {
          await store.appendMessage({
            threadId: thread.id,
            runId,
            role: 'tool',
            content: '',
            toolResults: results,
          })
        },
      })

      const followUps =
        this.#config.followUps && answer
          ? await this.#followUps(request, messages, answer, budget)
          : undefined
      await finish({ status: 'done' })
      log.append({ event: 'done', data: followUps ? { followUps } : {} })
      debug('run %s done after %d step(s)', runId, budget.used)
    } catch (error) {
      // A cancel during retrieval is a cancel, not a retrieval failure
      const known =
        error instanceof QuotaExceededError
          ? { code: 'quota_exceeded', message: 'The daily token quota is used up' }
          : error instanceof RetrievalFailedError && !signal.aborted
            ? { code: 'retrieval_failed', message: 'Retrieval failed for this turn' }
            : null
      if (known) {
        debug('run %s failed: %s', runId, known.code)
        await finish({ status: 'failed', errorCode: known.code })
        log.append({ event: 'error', data: known })
        return
      }
      if (signal.aborted) {
        await finish({ status: 'aborted', errorCode: 'aborted' })
        log.append({ event: 'done', data: { aborted: true } })
        debug('run %s aborted', runId)
        return
      }
      await this.#reportFailure(runId, error)
      await finish({ status: 'failed', errorCode: 'run_failed' }).catch(() => {})
      log.append({ event: 'error', data: { code: 'run_failed', message: 'The run failed' } })
    }
  }

  /**
   * One agent's model steps, until it answers without a tool call (its text
   * is returned) or its own `maxSteps` or the run's budget is spent (null).
   * Tool calls go through the executor, handoff calls run their agent here.
   */
  async #steps(turn: TurnRequest, budget: StepBudget, pass: AgentPass): Promise<string | null> {
    const { runId, thread, actor, store, signal } = turn
    const { agent, messages } = pass
    const prompt = await buildSystemPrompt(this.#app, this.#config, agent, {
      actor,
      threadId: thread.id,
      pageContext: turn.pageContext,
    })
    const system = [prompt, pass.retrieved].filter(Boolean).join('\n\n')
    const { allowed, declared } = await this.toolsFor(agent, actor)
    const handoffs = handoffTargets(agent, this.#config.agents)
    const tools = [
      ...declared.map((tool) => ({
        name: tool.spec.name,
        description: tool.spec.description,
        inputSchema: tool.spec.inputSchema,
      })),
      ...[...handoffs.values()].map(handoffToolSpec),
    ]
    const handoffScope = {
      store,
      runId,
      threadId: thread.id,
      actor,
      signal,
      depth: pass.depth,
      maxMessageLength: this.#config.maxMessageLength,
      // The agent handed a task sees only that task, and streams nothing
      runAgent: (target: ResolvedAgent, depth: number, task: string) =>
        this.#steps(turn, budget, {
          agent: target,
          depth,
          messages: [{ role: 'user', text: task }],
        }),
    }

    let ownSteps = 0
    while (ownSteps < agent.maxSteps && budget.used < budget.limit) {
      const request = { system, messages, tools, maxOutputTokens: agent.maxOutputTokens }
      const reservation = await holdQuota(
        this.#config.quota,
        actor.id,
        budget.quotaDay,
        holdSize(request)
      )
      ownSteps++
      budget.used++
      let text = ''
      const calls: ModelToolCall[] = []
      try {
        await this.#callModel(
          turn,
          budget,
          agent,
          reservation,
          'step',
          budget.used,
          request,
          (event) => {
            if (event.type === 'text-delta') {
              text += event.text
              pass.onDelta?.(event.text)
            } else {
              calls.push({
                toolCallId: event.toolCallId,
                toolName: event.toolName,
                input: event.input,
              })
            }
          }
        )
      } finally {
        if (text || calls.length) await pass.onStep?.(text, calls)
      }
      messages.push({ role: 'assistant', text, toolCalls: calls })
      if (!calls.length) return text

      const results: ToolResult[] = []
      const lastStep = ownSteps >= agent.maxSteps || budget.used >= budget.limit
      for (const call of calls) {
        const target = handoffs.get(call.toolName)
        let output: unknown
        if (lastStep) {
          output = await this.#executor.skip(call, { store, runId, threadId: thread.id, actor })
        } else if (target) {
          output = await dispatchHandoff(call, target, handoffScope)
        } else {
          output = await this.#executor.execute(call, {
            store,
            runId,
            threadId: thread.id,
            actor,
            tools: allowed,
            signal,
            approvals: turn.approvals,
            announce: (frame) => turn.log.append({ event: 'approval', data: frame }),
          })
        }
        results.push({ toolCallId: call.toolCallId, toolName: call.toolName, output })
      }
      await pass.onResults?.(results)
      messages.push({ role: 'tool', results })
    }
    return null
  }

  /**
   * One model call, retried while it streamed nothing: streams its events
   * to `onEvent`, then ends the quota hold and writes its priced usage row,
   * a failed call included.
   */
  async #callModel(
    turn: TurnRequest,
    budget: StepBudget,
    agent: ResolvedAgent,
    reservation: QuotaHold | null,
    kind: UsageInput['kind'],
    step: number,
    request: Omit<ModelStepRequest, 'signal'>,
    onEvent: (event: Exclude<ModelStepEvent, { type: 'finish' }>) => void
  ) {
    const { runId, thread, actor, store } = turn
    let usage: TokenUsage = UNKNOWN_USAGE
    let streamed = false
    const stopRenewing = keepHold(this.#config.quota, reservation)
    try {
      await streamWithRetries(
        this.#config.model,
        { ...request, signal: turn.signal },
        {
          maxRetries: this.#config.modelMaxRetries,
          onEvent: (event) => {
            streamed = true
            if (event.type === 'finish') usage = event.usage
            else onEvent(event)
          },
          onRetry: (attempt) => {
            budget.retries++
            debug('run %s: model call retried (%d)', runId, attempt)
          },
        }
      )
    } finally {
      stopRenewing()
      // Nothing streamed and no cancel: the provider refused the call and billed nothing
      await endHold(this.#config.quota, reservation, usage, streamed || turn.signal.aborted)
      const recorded = await store.recordUsage({
        ...usage,
        runId,
        threadId: thread.id,
        actorRef: actor.id,
        agentName: agent.name,
        model: agent.model ?? this.#config.model.label,
        kind,
        step,
        day: today(),
      })
      publishAgentEvent('usage.recorded', {
        runId,
        model: recorded.model,
        step: recorded.step,
        known: recorded.known,
        cost: recorded.cost,
        costSource: recorded.costSource,
      })
    }
  }

  /**
   * The extra call proposing follow-up questions, stored on the answer. It
   * never fails the turn, whose answer is already delivered: a quota that
   * cannot hold it or a failed call leaves an empty list. A cancel still
   * aborts the run.
   */
  async #followUps(
    turn: TurnRequest,
    history: ModelMessage[],
    answer: MessageRow,
    budget: StepBudget
  ) {
    const count = this.#config.followUps!.count
    let followUps: string[] = []
    try {
      const request = {
        system: FOLLOW_UPS_SYSTEM,
        messages: followUpMessages(history, count),
        tools: [],
        maxOutputTokens: turn.agent.maxOutputTokens,
      }
      const reservation = await holdQuota(
        this.#config.quota,
        turn.actor.id,
        budget.quotaDay,
        holdSize(request)
      )
      let text = ''
      const collect = (event: { type: string; text?: string }) => {
        if (event.type === 'text-delta') text += event.text
      }
      const call = [turn.agent, reservation, 'follow_ups', budget.used + 1] as const
      await this.#callModel(turn, budget, ...call, request, collect)
      followUps = parseFollowUps(text, count)
    } catch (error) {
      if (turn.signal.aborted) throw error
      debug('run %s: no follow-ups (%s)', turn.runId, (error as Error)?.name)
    }
    await turn.store.setFollowUps(answer.id, followUps)
    return followUps
  }
}
