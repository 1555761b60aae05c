import { getActiveTest } from '@japa/runner'
import type { Router } from '@adonisjs/core/http'
import { defineConfig as bodyParserConfig } from '@adonisjs/core/bodyparser'
import { BodyParserMiddleware } from '@adonisjs/bodyparser/bodyparser_middleware'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { createDatabase, setupApp } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { actors, defineConfig } from '../../src/agent/main.ts'
import type { AgentConfigInput } from '../../src/agent/types.ts'
import type { AgentManager } from '../../src/agent/manager.ts'
import { FakeModelServer } from './fake_model.ts'
import { SseReader } from '../sse_client.ts'

export type Wire = 'openai' | 'anthropic'

export interface TestActor {
  id: string
  roles?: string[]
}

export const ALICE: TestActor = { id: 'alice', roles: ['ADMIN'] }
export const BOB: TestActor = { id: 'bob', roles: ['ADMIN'] }

/** A real AI SDK provider pointed at the fake (or at its URL, from another process) */
export function fakeProviderModel(fake: { url: string }, wire: Wire, includeUsage = true) {
  return wire === 'anthropic'
    ? createAnthropic({ baseURL: `${fake.url}/v1`, apiKey: 'test-key' })('claude-sonnet-4-5')
    : createOpenAICompatible({
        name: 'fake',
        baseURL: `${fake.url}/v1`,
        apiKey: 'test-key',
        includeUsage,
      })('fake-model')
}

/** The headers `actors.header()` reads the actor from */
export function actorHeaders(actor: TestActor) {
  return { 'x-actor-id': actor.id, 'x-actor-roles': (actor.roles ?? []).join(',') }
}

/** The body parser as start/kernel.ts registers it: JSON bodies reach the agent routes */
export function useBodyParser(router: Router) {
  const config = bodyParserConfig({})
  router.use([
    async () => ({
      default: class extends BodyParserMiddleware {
        constructor() {
          super(config as any)
        }
      },
    }),
  ])
}

/**
 * A real Adonis app with the agent provider, the agent tables created from
 * the migration stubs, and a fake model API on loopback behind the real AI
 * SDK provider of the chosen wire format.
 */
export async function agentApp(
  options: {
    wire?: Wire
    includeUsage?: boolean
    config?: Partial<AgentConfigInput>
    /** The model, built once the fake listens (default: the wire's real provider) */
    model?: (fake: FakeModelServer) => AgentConfigInput['model']
    /** A second instance: the first one's fake model, and its tables (already created) */
    sharedWith?: { fake: FakeModelServer }
    /** More providers (e.g. @adonisjs/redis) and their config files */
    providers?: (() => Promise<any>)[]
    appConfig?: Record<string, unknown>
  } = {}
) {
  const test = getActiveTest()!
  let fake: FakeModelServer
  const db = await createDatabase()
  if (options.sharedWith) {
    fake = options.sharedWith.fake
  } else {
    fake = await new FakeModelServer().start()
    test.cleanup(() => fake.close())
    await migrateStubs(db, 'agent')
    test.cleanup(() => dropStubTables(db, 'agent'))
  }

  const testApp = await setupApp({
    database: true,
    providers: [
      () => import('./exception_handler_provider.ts'),
      ...(options.providers ?? []),
      () => import('../../providers/agent_provider.ts'),
    ],
    config: {
      ...options.appConfig,
      agent: defineConfig({
        model:
          options.model?.(fake) ??
          fakeProviderModel(fake, options.wire ?? 'openai', options.includeUsage),
        actorResolver: actors.header(),
        modelMaxRetries: 0,
        ...options.config,
      }),
    },
    routes: useBodyParser,
  })
  const manager: AgentManager = await testApp.app.container.make('atrium.agent')
  const base = `${testApp.url}/agent`

  const request = (
    method: string,
    path: string,
    actor: TestActor = ALICE,
    body?: unknown,
    headers: Record<string, string> = {}
  ) =>
    fetch(`${base}${path}`, {
      method,
      headers: {
        ...actorHeaders(actor),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })

  /** POST /agent/chat, returning the response and a frame reader */
  const chat = async (body: Record<string, unknown>, actor: TestActor = ALICE) => {
    const response = await request('POST', '/chat', actor, body)
    return { response, sse: new SseReader(response) }
  }

  /** GET /agent/chat/:runId/stream */
  const resume = async (
    runId: string,
    from: { lastEventId?: string; after?: string; actor?: TestActor } = {}
  ) => {
    const query = from.after === undefined ? '' : `?after=${from.after}`
    const headers: Record<string, string> =
      from.lastEventId === undefined ? {} : { 'last-event-id': from.lastEventId }
    const response = await request(
      'GET',
      `/chat/${runId}/stream${query}`,
      from.actor,
      undefined,
      headers
    )
    return { response, sse: new SseReader(response) }
  }

  return { ...testApp, fake, db, manager, request, chat, resume }
}

/** The text of the delta frames, in order */
export function deltasOf(frames: Array<{ data?: any; event?: string }>) {
  return frames
    .filter((frame) => !frame.event && frame.data?.delta !== undefined)
    .map((f) => f.data.delta)
}

/** A JSON response body, untyped for assertions */
export async function bodyOf(response: Response): Promise<any> {
  return response.json()
}

/** The first entry of an error body */
export async function errorOf(response: Response): Promise<Record<string, unknown>> {
  const body = await response.json()
  return (body as any).errors[0]
}

/** The status of a response once it arrives */
export async function statusOf(pending: Promise<Response>) {
  const response = await pending
  return response.status
}

/** The stored status of a run */
export async function runStatus(manager: AgentManager, runId: string) {
  const run = await manager.config.store.findRun(runId)
  return run?.status
}
