import { configProvider } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import type { ApplicationService, ConfigProvider } from '@adonisjs/core/types'
import type { Database } from '@adonisjs/lucid/database'
import type { LanguageModel } from 'ai'
import { assertPackagesInstalled } from '../shared/optional_import.ts'
import { resolveAgentRegistry } from './agent_registry.ts'
import { CONFIG_FILE, positiveInteger } from './config_checks.ts'
import { resolveAttachments } from './attachments/config.ts'
import { resolveRetrieval } from './retrieval.ts'
import { discoverAgents } from './discovery.ts'
import { assertNotHandoffName } from './handoff.ts'
import { AgentConfigException } from './errors.ts'
import { isLazyModel } from './model/lazy.ts'
import { isModelPort } from './model/port.ts'
import { resolvePricing } from './pricing/config.ts'
import { DEFAULT_HOLD_LEASE_MS, isQuotaStore, type QuotaStore } from './quota/contract.ts'
import { assertTimeZone } from './quota/day.ts'
import type { AgentStore } from './store/contract.ts'
import { resolveContributors } from './prompt.ts'
import { sinks } from './sinks.ts'
import { resolveTool } from './tools.ts'
import type {
  ActorResolver,
  AgentActor,
  AgentConfigInput,
  AgentStoreFactory,
  ResolvedAgentConfig,
  RolesPolicy,
} from './types.ts'

const DEFAULT_MAX_STEPS = 8

/**
 * The default tool gate: the actor needs one of the tool's roles, or one of
 * `defaultRoles` when the tool declares none.
 */
export function defaultRolesPolicy(defaultRoles: string[]): RolesPolicy {
  return ({ actor, roles }) => {
    const required = roles ?? defaultRoles
    return required.some((role) => actor.roles?.includes(role))
  }
}

/**
 * Actor resolvers for `actorResolver`.
 */
export const actors = {
  /**
   * The user `@adonisjs/auth` authenticated (`ctx.auth.user`); put the auth
   * middleware in `middleware`. No user answers 401.
   */
  auth(options: { roles?: (user: any) => string[] | undefined } = {}): ActorResolver {
    return (ctx: HttpContext) => {
      const auth = (ctx as { auth?: { user?: any } }).auth
      if (!auth) {
        throw new AgentConfigException(
          `actors.auth() in ${CONFIG_FILE} needs @adonisjs/auth on the agent routes: add the auth middleware to "middleware" (for example middleware: [middleware.auth()])`
        )
      }
      const user = auth.user
      if (!user || user.id === undefined || user.id === null) return null
      return { id: String(user.id), roles: options.roles?.(user) ?? user.roles ?? undefined }
    }
  },

  /**
   * Reads the actor from request headers. Opt-in and only safe behind a
   * proxy that sets these headers itself: a client can send any value.
   */
  header(options: { header?: string; rolesHeader?: string } = {}): ActorResolver {
    const header = options.header ?? 'x-actor-id'
    const rolesHeader = options.rolesHeader ?? 'x-actor-roles'
    return (ctx: HttpContext): AgentActor | null => {
      const id = ctx.request.header(header)?.trim()
      if (!id || id.length > 191) return null
      const roles = ctx.request.header(rolesHeader)
      return {
        id,
        roles: roles
          ? roles
              .split(',')
              .map((role) => role.trim())
              .filter(Boolean)
          : [],
      }
    }
  },
}

/**
 * Store factories for `store`.
 */
export const stores = {
  /**
   * Lucid (SQLite, PostgreSQL, MariaDB/MySQL) on the named or default
   * connection. `preparedStatements: false` sends every query through Lucid,
   * for a PostgreSQL pooler that does not keep named prepared statements
   * (PgBouncer in transaction mode before 1.21).
   */
  lucid(options: { connection?: string; preparedStatements?: boolean } = {}): AgentStoreFactory {
    return async (app) => {
      if (!app.container.hasBinding('lucid.db')) {
        throw new AgentConfigException(
          `The agent store in ${CONFIG_FILE} needs @adonisjs/lucid: run "node ace add @adonisjs/lucid", or set "store" to another store`
        )
      }
      const { LucidAgentStore } = await import('./store/lucid.ts')
      const { LucidGovernanceQueries } = await import('./governance/queries.ts')
      // Typed here: an app's container types may not know Lucid's binding
      const db: Database = await app.container.make('lucid.db' as any)
      const { LucidInsightQueries } = await import('./governance/insights.ts')
      const store = new LucidAgentStore(db, options.connection, {
        preparedStatements: options.preparedStatements,
      })
      store.governance = new LucidGovernanceQueries(() => db.connection(options.connection))
      store.insights = new LucidInsightQueries(() => db.connection(options.connection))
      return store
    }
  },
}

/** `followUps`: off, `true` (3 questions) or `{ count }` from 1 to 10 */
function resolveFollowUps(value: AgentConfigInput['followUps']) {
  if (value === undefined || value === false) return undefined
  if (value === true) return { count: 3 }
  const count = typeof value === 'object' && value !== null ? value.count : undefined
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 10) {
    throw new AgentConfigException(
      `Invalid "followUps" in ${CONFIG_FILE}: expected true, false or { count } with a count from 1 to 10, received ${JSON.stringify(value)}`
    )
  }
  return { count }
}

/** The governance API options, or undefined when the app mounts none */
function resolveDashboard(dashboard: AgentConfigInput['dashboard']) {
  if (dashboard === undefined) return undefined
  if (!dashboard || typeof dashboard !== 'object') {
    throw new AgentConfigException(
      `Invalid "dashboard" in ${CONFIG_FILE}: expected { path?, middleware?, authorize? }`
    )
  }
  const path = (dashboard.path ?? '/ai-gateway/api').replace(/^\/+|\/+$/g, '')
  if (!/^[a-zA-Z0-9_\-/]+$/.test(path)) {
    throw new AgentConfigException(
      `Invalid "dashboard.path" in ${CONFIG_FILE}: ${JSON.stringify(dashboard.path)} must be a route prefix such as "/ai-gateway/api"`
    )
  }
  if (dashboard.middleware !== undefined && !Array.isArray(dashboard.middleware)) {
    throw new AgentConfigException(
      `Invalid "dashboard.middleware" in ${CONFIG_FILE}: expected an array of middleware`
    )
  }
  if (dashboard.authorize !== undefined && typeof dashboard.authorize !== 'function') {
    throw new AgentConfigException(
      `Invalid "dashboard.authorize" in ${CONFIG_FILE}: expected a function (ctx) => boolean`
    )
  }
  return { path, middleware: dashboard.middleware ?? [], authorize: dashboard.authorize }
}

/**
 * The daily budget: the `quota` option wins; else `quotaLimitTokens` in the
 * store's own table; else none.
 */
async function resolveQuotaStore(
  app: ApplicationService,
  quota: AgentConfigInput['quota'],
  limitTokens: number | undefined,
  store: AgentStore
): Promise<QuotaStore | undefined> {
  if (quota !== undefined) {
    const built = typeof quota === 'function' ? await quota(app) : quota
    if (!isQuotaStore(built)) {
      throw new AgentConfigException(
        `The "quota" factory in ${CONFIG_FILE} did not return a quota store (an object with reserve, settle, release and used)`
      )
    }
    return built
  }
  if (limitTokens === undefined) return undefined
  if (!store.dailyQuota) {
    throw new AgentConfigException(
      `"quotaLimitTokens" in ${CONFIG_FILE} needs a store that keeps quotas, such as stores.lucid(). Set "quota" to a quota store (quotas.redis(...)) or remove quotaLimitTokens`
    )
  }
  return store.dailyQuota(limitTokens)
}

/**
 * Validates `config/agent.ts`. What needs the container (the AI SDK check,
 * Lucid's db) resolves when the provider reads the config.
 */
export function defineConfig(config: AgentConfigInput): ConfigProvider<ResolvedAgentConfig> {
  if (!config || typeof config !== 'object') {
    throw new AgentConfigException(
      `${CONFIG_FILE} must export defineConfig({ model, actorResolver })`
    )
  }
  if (!config.model) {
    throw new AgentConfigException(
      `Missing "model" in ${CONFIG_FILE}. Set an AI SDK model, for example model: models.anthropic('claude-sonnet-4-5', { apiKey: env.get('ANTHROPIC_API_KEY') })`
    )
  }
  if (typeof config.actorResolver !== 'function') {
    throw new AgentConfigException(
      `Missing "actorResolver" in ${CONFIG_FILE}. Use actors.auth() with @adonisjs/auth, or your own (ctx) => ({ id, roles }): no default fabricates a caller`
    )
  }
  if (config.dispatchedSteps === true && config.durable !== true) {
    throw new AgentConfigException(
      `"dispatchedSteps: true" in ${CONFIG_FILE} needs "durable: true": dispatched steps only exist in durable runs. Remove dispatchedSteps or set durable: true`
    )
  }
  if (config.durable === true) {
    throw new AgentConfigException(
      `"durable: true" in ${CONFIG_FILE} needs the durable module and a configured durable engine, which this version of adonis-atrium does not include. Remove durable (and dispatchedSteps)`
    )
  }
  if (
    config.quota !== undefined &&
    typeof config.quota !== 'function' &&
    !isQuotaStore(config.quota)
  ) {
    throw new AgentConfigException(
      `Invalid "quota" in ${CONFIG_FILE}: expected quotas.redis({ connection: 'main', limitTokens }), quotas.lucid({ limitTokens }) or an object with reserve, settle, release and used`
    )
  }
  const quotaLimitTokens = positiveInteger('quotaLimitTokens', config.quotaLimitTokens)
  const quotaReserveTokens = positiveInteger('quotaReserveTokens', config.quotaReserveTokens, 8192)!
  const quotaHoldLeaseMs = positiveInteger(
    'quotaHoldLeaseMs',
    config.quotaHoldLeaseMs,
    DEFAULT_HOLD_LEASE_MS,
    // A hold that outlives its quota day holds nothing worth keeping
    { max: 86_400_000 }
  )
  const quotaTimeZone = assertTimeZone(config.quotaTimeZone ?? 'UTC', 'quotaTimeZone', CONFIG_FILE)
  const path = (config.path ?? 'agent').replace(/^\/+|\/+$/g, '')
  if (!/^[a-zA-Z0-9_\-/]+$/.test(path)) {
    throw new AgentConfigException(
      `Invalid "path" in ${CONFIG_FILE}: ${JSON.stringify(config.path)} must be a route prefix such as "agent"`
    )
  }
  if (config.middleware !== undefined && !Array.isArray(config.middleware)) {
    throw new AgentConfigException(
      `Invalid "middleware" in ${CONFIG_FILE}: expected an array, for example [middleware.auth()]`
    )
  }
  const defaultRoles = config.defaultRoles ?? ['ADMIN']
  if (!Array.isArray(defaultRoles) || defaultRoles.some((role) => typeof role !== 'string')) {
    throw new AgentConfigException(
      `Invalid "defaultRoles" in ${CONFIG_FILE}: expected an array of role names`
    )
  }
  if (config.rolesPolicy !== undefined && typeof config.rolesPolicy !== 'function') {
    throw new AgentConfigException(
      `Invalid "rolesPolicy" in ${CONFIG_FILE}: expected a function ({ actor, toolName, roles }) => boolean`
    )
  }
  const toolTimeoutMs = positiveInteger('toolTimeoutMs', config.toolTimeoutMs)
  const maxSteps = positiveInteger('maxSteps', config.maxSteps, DEFAULT_MAX_STEPS)!

  if (config.tools !== undefined && !Array.isArray(config.tools)) {
    throw new AgentConfigException(`Invalid "tools" in ${CONFIG_FILE}: expected an array of tools`)
  }
  const tools = (config.tools ?? []).map((tool, index) => resolveTool(tool, index))
  const names = new Set<string>()
  for (const tool of tools) {
    if (names.has(tool.spec.name)) {
      throw new AgentConfigException(
        `Two tools are named "${tool.spec.name}" in "tools" of ${CONFIG_FILE}: tool names must be unique`
      )
    }
    assertNotHandoffName(tool.spec.name)
    names.add(tool.spec.name)
  }
  if (config.agents !== undefined && !Array.isArray(config.agents)) {
    throw new AgentConfigException(
      `Invalid "agents" in ${CONFIG_FILE}: expected an array of agent classes`
    )
  }
  if (config.discoverAgents !== undefined && typeof config.discoverAgents !== 'boolean') {
    throw new AgentConfigException(
      `Invalid "discoverAgents" in ${CONFIG_FILE}: expected true or false`
    )
  }
  if (config.discoverAgents === true && config.agents !== undefined) {
    throw new AgentConfigException(
      `"discoverAgents: true" and "agents" are both set in ${CONFIG_FILE}: agents come either from the list or from app/agents/. Remove one of them`
    )
  }
  const registryOptions = {
    maxSteps,
    maxOutputTokens: positiveInteger('maxOutputTokens', config.maxOutputTokens),
    toolNames: names,
    defaultAgent: config.defaultAgent,
  }
  // A list in the config wins; without one the classes of app/agents/ are found at boot
  const listed =
    config.agents !== undefined || config.discoverAgents === false
      ? resolveAgentRegistry(config.agents ?? [], {
          ...registryOptions,
          source: { kind: 'config' },
        })
      : undefined

  const sse = {
    heartbeatMs: positiveInteger('sse.heartbeatMs', config.sse?.heartbeatMs, 15_000)!,
    maxFramesPerRun: positiveInteger('sse.maxFramesPerRun', config.sse?.maxFramesPerRun, 10_000)!,
    retainFinishedMs: positiveInteger(
      'sse.retainFinishedMs',
      config.sse?.retainFinishedMs,
      300_000
    )!,
  }
  if (config.sink !== undefined && typeof config.sink !== 'function') {
    throw new AgentConfigException(
      `Invalid "sink" in ${CONFIG_FILE}: use sinks.memory() or sinks.redis({ connection: 'main' })`
    )
  }
  const dashboard = resolveDashboard(config.dashboard)
  const pricing = resolvePricing(config.pricing, CONFIG_FILE)
  const maxMessageLength = positiveInteger('maxMessageLength', config.maxMessageLength, 100_000)!
  const followUps = resolveFollowUps(config.followUps)
  const maxPageContextBytes = positiveInteger(
    'maxPageContextBytes',
    config.maxPageContextBytes,
    16_384
  )!
  const contributors = resolveContributors(config.systemPromptContributors, CONFIG_FILE)
  const modelMaxRetries =
    config.modelMaxRetries === 0 ? 0 : positiveInteger('modelMaxRetries', config.modelMaxRetries, 2)
  const attachments = resolveAttachments(config.attachments)
  const retrieval = resolveRetrieval(config.retrieval)

  return configProvider.create(async (app): Promise<ResolvedAgentConfig> => {
    let registry = listed
    if (!registry) {
      const { classes, files } = await discoverAgents(app)
      registry = resolveAgentRegistry(classes, {
        ...registryOptions,
        source: { kind: 'discovered', files },
      })
    }
    const { agents, defaultAgent } = registry
    let model
    if (isModelPort(config.model)) {
      model = config.model
    } else {
      // Every missing package in one line: the AI SDK and the model's provider
      const lazy = isLazyModel(config.model) ? config.model : undefined
      assertPackagesInstalled(
        lazy ? ['ai', lazy.packageName] : ['ai'],
        `The agent gateway (${CONFIG_FILE})`
      )
      const { AiSdkModel } = await import('./model/ai_sdk.ts')
      const languageModel = lazy ? await lazy.resolve() : (config.model as LanguageModel)
      // The gateway retries (and counts) failed calls itself: the SDK must not retry inside one
      model = new AiSdkModel(languageModel, { maxRetries: 0 })
    }
    const store = await (config.store ?? stores.lucid())(app)
    if (Object.keys(pricing).length) {
      if (!store.pricing) {
        throw new AgentConfigException(
          `"pricing" in ${CONFIG_FILE} needs a store that keeps prices, such as stores.lucid(). Remove pricing or change the store`
        )
      }
      store.pricing.useDefaults(pricing)
    }
    const quotaStore = await resolveQuotaStore(app, config.quota, quotaLimitTokens, store)
    const sink = await (config.sink ?? sinks.memory())(app, {
      maxFrames: sse.maxFramesPerRun,
      retainFinishedMs: sse.retainFinishedMs,
    })
    return {
      model,
      actorResolver: config.actorResolver,
      agents,
      tools,
      store,
      sink,
      dashboard,
      toolTimeoutMs,
      maxSteps,
      path,
      middleware: config.middleware ?? [],
      rolesPolicy: config.rolesPolicy ?? defaultRolesPolicy(defaultRoles),
      defaultRoles,
      defaultAgent,
      sse,
      maxMessageLength,
      maxPageContextBytes,
      contributors,
      followUps,
      attachments: await attachments(app),
      retrieval,
      quota: quotaStore && {
        store: quotaStore,
        reserveTokens: quotaReserveTokens,
        holdLeaseMs: quotaHoldLeaseMs,
      },
      quotaTimeZone,
      modelMaxRetries: modelMaxRetries!,
    }
  })
}
