import type { HttpContext } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import type { MiddlewareFn, ParsedNamedMiddleware } from '@adonisjs/core/types/http'
import type { LanguageModel } from 'ai'
import type { LazyModel } from './model/lazy.ts'
import type { RedisRunSink } from './sink/redis.ts'
import type { AgentSinkFactory } from './sinks.ts'
import type { JsonSchema, ModelPort } from './model/port.ts'
import type { AgentStore } from './store/contract.ts'
import type { AgentAttachmentsConfig, ResolvedAttachments } from './attachments/config.ts'
import type { AgentRetrievalConfig, ResolvedRetrieval } from './retrieval.ts'
import type { QuotaStore, QuotaStoreFactory } from './quota/contract.ts'
import type { GatewayQuota } from './quota/holds.ts'

/**
 * The acting actor of a request. `id` attributes threads, runs and usage;
 * `roles` feed the tool roles policy.
 */
export interface AgentActor {
  id: string
  roles?: string[]
}

/**
 * Resolves the acting actor per request. Returning null answers 401: no
 * default fabricates a caller.
 */
export type ActorResolver = (ctx: HttpContext) => AgentActor | null | Promise<AgentActor | null>

/** A VineJS compiled validator, or anything with the same `validate` */
export interface InputValidator {
  validate: (data: any, ...options: any[]) => Promise<unknown>
  toJSONSchema?: () => object
}

/** How a tool presents itself to the model and to the roles policy */
export interface AgentToolSpec {
  name: string
  description: string
  /** JSON Schema of the input, or a VineJS validator; re-checked before every execution */
  inputSchema?: JsonSchema | InputValidator
  /** Roles allowed to run the tool; omitted means the policy's `defaultRoles` */
  roles?: string[]
  /** A person approves each call (POST /agent/tool-call/approve) before it runs */
  requiresApproval?: boolean
}

/** What a tool handler receives beside its input */
export interface AgentToolContext {
  actor: AgentActor
  runId: string
  threadId: string
  toolCallId: string
  /** Aborted on `toolTimeoutMs` or when the run is cancelled */
  signal: AbortSignal
}

/** A functional tool */
export interface FunctionalAgentTool<Input = any, Output = unknown> {
  spec: AgentToolSpec
  handler(input: Input, context: AgentToolContext): Output | Promise<Output>
}

/** A tool class resolved through the container (`@inject()` works) */
export interface AgentToolClass<Input = any, Output = unknown> {
  new (...args: any[]): {
    handle(input: Input, context: AgentToolContext): Output | Promise<Output>
  }
  spec: AgentToolSpec
}

export type AgentToolDefinition = FunctionalAgentTool | AgentToolClass

/** `@agent({...})` options */
export interface AgentOptions {
  name: string
  description: string
  systemPrompt?: string
  /** Accounting label only: the model that runs is `config.model` */
  model?: string
  /** Cap on model steps of one turn (default 8) */
  maxSteps?: number
  /**
   * Cap on the tokens one model call may write; with it a call's quota hold
   * is its estimated prompt plus this cap (default: config `maxOutputTokens`)
   */
  maxOutputTokens?: number
  /** Allow-list of tool names; omitted means every tool the actor's roles allow */
  tools?: string[]
  /**
   * Agents this one may hand a turn to, each exposed to the model as the tool
   * `handoff_to_<name>`. A thunk (`() => BillingAgent`) refers to a class
   * declared later in the file or in a module that imports this one.
   */
  handoff?: Array<AgentClass | (() => AgentClass)>
}

/** What a system prompt contributor is told about the turn */
export interface SystemPromptContext {
  actor: AgentActor
  threadId: string
  agentName: string
  /** The chat body's `pageContext` (client data: trust it only as far as the client) */
  pageContext?: Record<string, unknown>
}

/** A function returning a system prompt section; null or '' adds nothing */
export type SystemPromptContributorFn = (
  context: SystemPromptContext
) => string | null | undefined | Promise<string | null | undefined>

/** A contributor: a function, or a class with a `@systemPromptContributor()` method */
export type SystemPromptContributor = SystemPromptContributorFn | (new (...args: any[]) => object)

/** A class decorated with `@agent()` */
export type AgentClass = new (...args: any[]) => object

/** What the roles policy is asked about one tool call */
export interface RolesPolicyRequest {
  actor: AgentActor
  toolName: string
  /** The tool's declared roles; undefined when it declares none */
  roles: string[] | undefined
}

/** The tool authorization gate */
export type RolesPolicy = (request: RolesPolicyRequest) => boolean | Promise<boolean>

/** A middleware class module, imported lazily (`() => import('#middleware/auth_middleware')`) */
export type LazyMiddleware = () => Promise<{
  default: new (...args: any[]) => { handle(ctx: HttpContext, next: () => Promise<any>): any }
}>

/**
 * Route middleware: a lazy import of a middleware class, an inline
 * function, or a named middleware (config files cannot import start/kernel)
 */
export type AgentMiddleware = MiddlewareFn | ParsedNamedMiddleware | LazyMiddleware

/** The store to persist threads, messages, runs, tool calls and usage */
export type AgentStoreFactory = (app: ApplicationService) => AgentStore | Promise<AgentStore>

/** The governance API (`dashboard` of config/agent.ts) */
export interface AgentDashboardConfig {
  /** Route prefix (default `/ai-gateway/api`) */
  path?: string
  /** Middleware on every governance route (authentication) */
  middleware?: AgentMiddleware[]
  /**
   * Who may use the governance API. Without it every request answers 403:
   * the API shows every actor's threads and decides any tool call.
   */
  authorize?: (ctx: HttpContext) => boolean | Promise<boolean>
}

/**
 * One model's price per million tokens, in the app's currency: a number or
 * a decimal string with at most 6 decimals. A cache price left out is
 * billed at the input price.
 */
export interface ModelPriceInput {
  inputPricePer1m: number | string
  outputPricePer1m: number | string
  cacheWritePricePer1m?: number | string
  cacheReadPricePer1m?: number | string
}

/** `config/agent.ts` as the app writes it */
export interface AgentConfigInput {
  /**
   * `models.anthropic(...)` (the provider package is imported at boot), an AI
   * SDK language model (`createOpenAI(...)('gpt-4.1')`), or a model port
   */
  model: LazyModel | LanguageModel | ModelPort
  /** Resolves the acting actor; see `actors.auth()` and `actors.header()` */
  actorResolver: ActorResolver
  /**
   * Agent classes decorated with `@agent()`. Omitted, the `@agent()` classes
   * exported by the modules of `app/agents/` are discovered at boot
   */
  agents?: AgentClass[]
  /**
   * Discover `@agent()` classes in `app/agents/` at boot; true by default
   * when `agents` is omitted, and cannot be true with `agents`
   */
  discoverAgents?: boolean
  /** Functional or class tools */
  tools?: AgentToolDefinition[]
  /** Persistence; defaults to `stores.lucid()` (the app's default connection) */
  store?: AgentStoreFactory
  /**
   * Where runs' frames live for resumes: `sinks.memory()` (default, one
   * instance) or `sinks.redis({ connection: 'main' })` (any instance)
   */
  sink?: AgentSinkFactory
  /** A tool call running longer is aborted and recorded failed */
  toolTimeoutMs?: number
  /** Default cap on model steps per turn when an agent declares none (8) */
  maxSteps?: number
  /**
   * Default cap on the tokens one model call may write when an agent
   * declares none (none: the provider's own limit)
   */
  maxOutputTokens?: number
  /** Route prefix (default `agent`) */
  path?: string
  /** Middleware on every route of the gateway (the spec's guards) */
  middleware?: AgentMiddleware[]
  /** Tool authorization; the default policy requires one of the tool's roles or `defaultRoles` */
  rolesPolicy?: RolesPolicy
  /** Roles the default policy requires of a tool that declares none (`['ADMIN']`) */
  defaultRoles?: string[]
  /** Agent used when the caller selects none */
  defaultAgent?: string
  /** Durable runs are not built yet: true stops the boot */
  durable?: boolean
  /** Only meaningful with `durable`; true without it stops the boot */
  dispatchedSteps?: boolean
  /**
   * A quota store (`quotas.redis({ connection: 'main', limitTokens })`, or
   * any `QuotaStore`); wins over `quotaLimitTokens`
   */
  quota?: QuotaStore | QuotaStoreFactory
  /** Daily token budget per actor, kept in the agent_quota table; omit to disable quotas */
  quotaLimitTokens?: number
  /** Tokens held from the budget while one model call runs (8 192) */
  quotaReserveTokens?: number
  /** IANA time zone whose calendar day the quota counts ('UTC') */
  quotaTimeZone?: string
  /**
   * How long a model call's hold lasts unless renewed, in ms (10 minutes).
   * A running call renews it every third of that; the hold of an instance
   * that died is given back by the next reservation of the actor's day once
   * it ran out.
   */
  quotaHoldLeaseMs?: number
  /** The governance API; not mounted when omitted */
  dashboard?: AgentDashboardConfig
  /**
   * Default prices by model id, inserted into agent_pricing for the models
   * that have no price yet; prices set later (HTTP, Ace) win
   */
  pricing?: Record<string, ModelPriceInput>
  /** Server-sent events tuning */
  sse?: {
    /** Comment frame interval keeping idle proxies from closing the stream (15 s) */
    heartbeatMs?: number
    /** Frames kept per run for resumes (10 000) */
    maxFramesPerRun?: number
    /** How long a finished run's frames stay available to a resume (5 min) */
    retainFinishedMs?: number
  }
  /** Longest accepted chat `message`, in characters (100 000) */
  maxMessageLength?: number
  /** Largest accepted chat `pageContext`, in bytes of its JSON (16 384) */
  maxPageContextBytes?: number
  /** Sections appended after every agent's system prompt, in this order */
  systemPromptContributors?: SystemPromptContributor[]
  /**
   * One extra model call after each answer proposing follow-up questions,
   * stored on the assistant message and recorded as a `follow_ups` usage
   * row; `true` means 3
   */
  followUps?: boolean | { count: number }
  /**
   * Retries of a model call that failed before streaming anything with a
   * retryable error (429, 5xx, a refused connection), by the gateway (2)
   */
  modelMaxRetries?: number
  /**
   * Files on chat messages (`attachments` of the chat body) and the upload
   * route `POST /<path>/attachments` (`upload: true`, which needs `staging`)
   */
  attachments?: AgentAttachmentsConfig
  /** Passages retrieved for each turn's question, added to the system prompt */
  retrieval?: AgentRetrievalConfig
}

/** One agent after its decorator and the config are read */
export interface ResolvedAgent {
  name: string
  description: string
  systemPrompt?: string
  model?: string
  maxSteps: number
  maxOutputTokens?: number
  tools?: string[]
  /** Names of the agents it may hand a turn to */
  handoff: string[]
  agentClass?: AgentClass
  /** The method marked `@systemPrompt()` */
  systemPromptMethod?: string | symbol
}

/** A tool after normalization */
export interface ResolvedTool {
  spec: AgentToolSpec & { inputSchema: JsonSchema }
  validator?: InputValidator
  run(input: unknown, context: AgentToolContext, app: ApplicationService): Promise<unknown>
}

/** What the provider hands to the manager */
export interface ResolvedAgentConfig {
  model: ModelPort
  actorResolver: ActorResolver
  agents: ResolvedAgent[]
  tools: ResolvedTool[]
  store: AgentStore
  /** The cross-instance run log, or null for the in-memory one */
  sink: RedisRunSink | null
  toolTimeoutMs?: number
  maxSteps: number
  path: string
  middleware: AgentMiddleware[]
  rolesPolicy: RolesPolicy
  defaultRoles: string[]
  defaultAgent: string
  sse: { heartbeatMs: number; maxFramesPerRun: number; retainFinishedMs: number }
  maxMessageLength: number
  maxPageContextBytes: number
  /** Called in order for every turn; each returns a section of the system prompt */
  contributors: Array<(context: SystemPromptContext, app: ApplicationService) => Promise<string>>
  /** Follow-up questions after each answer; undefined when off */
  followUps?: { count: number }
  /** Attachment limits and the staging keeping their bytes (null: attachments refused) */
  attachments: ResolvedAttachments
  /** Retrieval before each turn; undefined when off */
  retrieval?: ResolvedRetrieval
  /** Retries of a model call that failed retryably before streaming anything */
  modelMaxRetries: number
  /** The daily budget; undefined when quotas are off */
  quota?: GatewayQuota
  /** The zone whose calendar day the quota counts */
  quotaTimeZone: string
  dashboard?: {
    path: string
    middleware: AgentMiddleware[]
    authorize?: (ctx: HttpContext) => boolean | Promise<boolean>
  }
}
