import type { AgentConfigInput, AgentStore, UsageInput } from '../../src/agent/main.ts'
import { ALICE, agentApp, type TestActor } from './helpers.ts'

export const ADMIN = { 'x-admin': 'yes' }

/** A UTC day `offset` days from today, as the routes take it */
export function dayFromToday(offset = 0) {
  return new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
}

/**
 * An agent app with the governance API authorized by `x-admin: yes`, and
 * shortcuts for its JSON routes and for finished turns.
 */
export async function insightApp(
  options: Parameters<typeof agentApp>[0] & { config?: Partial<AgentConfigInput> } = {}
) {
  const app = await agentApp({
    ...options,
    config: {
      dashboard: { authorize: (ctx) => ctx.request.header('x-admin') === 'yes' },
      ...options.config,
    },
  })
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${app.url}/ai-gateway/api${path}`, {
      ...init,
      headers: { ...ADMIN, ...(init.headers as Record<string, string>) },
    })
  const json = async (path: string) => {
    const response = await api(path)
    return { status: response.status, body: (await response.json()) as any }
  }
  const post = async (path: string, body: unknown) => {
    const response = await api(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as any }
  }
  /** Runs one finished turn and returns its run and thread ids */
  const turn = async (message: string, actor: TestActor = ALICE) => {
    const { response, sse } = await app.chat({ message }, actor)
    await sse.rest()
    return {
      runId: response.headers.get('x-agent-run-id')!,
      threadId: response.headers.get('x-agent-thread-id')!,
    }
  }
  const usageOf = (runId: string) => app.manager.config.store.listUsage(runId)
  return { ...app, api, json, post, turn, usageOf }
}

type App = Awaited<ReturnType<typeof insightApp>>

/** A thread and a running run of `agentName`, written through the store */
export async function runOf(store: AgentStore, agentName = 'default', actorRef = 'alice') {
  const thread = await store.createThread({ actorRef, title: null })
  const id = crypto.randomUUID()
  await store.createRun({ id, threadId: thread.id, actorRef, agentName })
  return { runId: id, threadId: thread.id }
}

export function usage(run: { runId: string; threadId: string }, step: number): UsageInput {
  return {
    ...run,
    known: true,
    uncachedInputTokens: 10,
    cacheReadTokens: 3,
    cacheWriteTokens: 2,
    outputTokens: 5,
    reasoningTokens: 1,
    actorRef: 'alice',
    agentName: 'default',
    model: 'load-model',
    kind: 'step',
    step,
    day: dayFromToday(),
  }
}

export async function rollup(app: App, model: string) {
  const rows = await app.db.from('agent_rollups').where('model', model)
  return rows.map((row: any) => ({
    modelCalls: Number(row.model_calls),
    uncached: Number(row.uncached_input_tokens),
    reasoning: Number(row.reasoning_tokens),
    cost: Number(row.cost),
    succeeded: Number(row.runs_succeeded),
    failed: Number(row.runs_failed),
    cancelled: Number(row.runs_cancelled),
  }))
}
