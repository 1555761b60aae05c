import type { AgentConfigInput } from '../../src/agent/main.ts'
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
