/**
 * Public API of `adonis-atrium/agent`.
 */
export { defineConfig, actors, stores, defaultRolesPolicy } from './define_config.ts'
export { agent, systemPrompt, systemPromptContributor } from './decorators.ts'
export { defineTool } from './tools.ts'
export { MAX_DELEGATION_DEPTH } from './handoff.ts'
export { AgentManager } from './manager.ts'
export { AiSdkModel, usageFromAiSdk } from './model/ai_sdk.ts'
export { models } from './model/lazy.ts'
export { sinks } from './sinks.ts'
export { stagings, FileSystemAttachmentStaging } from './attachments/staging.ts'
export type {
  AttachmentStaging,
  AttachmentStagingFactory,
  StagedAttachment,
} from './attachments/staging.ts'
export type { AgentAttachmentsConfig } from './attachments/config.ts'
export type {
  AgentRetrievalConfig,
  RetrievalRequest,
  RetrievedPassage,
  Retriever,
} from './retrieval.ts'
export type { AgentSinkFactory, RedisSinkConfig } from './sinks.ts'
export { quotas } from './quotas.ts'
export type { RedisQuotaConfig } from './quotas.ts'
export type { QuotaHold, QuotaStore, QuotaStoreFactory } from './quota/contract.ts'
export type { LazyModel, ProviderSettings } from './model/lazy.ts'
export { LucidAgentStore, AGENT_TABLES } from './store/lucid.ts'
export * as errors from './errors.ts'
export type * from './types.ts'
export type * from './model/port.ts'
export type * from './store/contract.ts'
export { AGENT_DIAGNOSTIC_EVENTS } from './diagnostics.ts'
export type { AgentDiagnosticEvent, AgentDiagnosticEvents } from './diagnostics.ts'
export type {
  ActorSpendRow,
  ModelSpendRow,
  ReliabilityOverview,
  SpendOverview,
  ThreadSpendRowWithLabel,
  ToolStatRow,
  UsageTrendPoint,
} from './governance/insights.ts'
export type { CurrentModelPrice } from './http/dashboard_insights.ts'
export { bucketUpperBound, durationBucket } from './governance/histogram.ts'
