/**
 * Public API of `adonis-atrium/console`.
 */
export { defineConfig, stores, watchers, MIN_SECRET_BYTES } from './define_config.ts'
export { parseCookieHeader, readCookieHeader } from './cookies.ts'
export { SESSION_COOKIE, signSession, verifySession } from './session.ts'
export { MemoryConsoleStore } from './stores/memory.ts'
export { explainWithLucid } from './http/explain.ts'
export { queueSchedules } from './queues/queue_schedules.ts'
export { queueJobs } from './queues/queue_jobs.ts'
export { CONSOLE_EVENTS } from './events.ts'
export type { ConsoleEvents, ConsoleEventName } from './events.ts'
export { traceScheduledTask, SCHEDULE_RUN_CHANNEL } from './queues/schedule_runs.ts'
export type { ScheduledTaskRun } from './queues/schedule_runs.ts'
export type { QueryExplainer, RecordedQuery } from './http/explain.ts'
export type { ConsoleManager } from './manager.ts'
export { ENTRY_TYPES } from './types.ts'
export { consoleMountPaths, isConsolePath } from './mount_paths.ts'
export { defineConsoleExtension } from './extensions/define_extension.ts'
export type {
  ConsoleDataProvider,
  ConsoleExtension,
  ConsoleExtensionOptions,
  ConsoleExtensionPage,
  ConsoleWatcherContext,
  CustomEntry,
  CustomWatcher,
} from './extensions/types.ts'
export { alertRules } from './alerts/config.ts'
export { alertChannels } from './alerts/channels.ts'
export type {
  AlertChannel,
  AlertCheckContext,
  AlertFinding,
  AlertsOptions,
  ConsoleAlert,
} from './alerts/config.ts'
export type { WebhookChannelOptions } from './alerts/channels.ts'
export type { AiDiagnosisOptions } from './ai/config.ts'
export type { StoredDiagnosis } from './ai/diagnoser.ts'
export { parseTraceparent } from './trace_context.ts'
export type { TraceIds, TraceContextResolver } from './trace_context.ts'
export * as errors from './errors.ts'
export type * from './types.ts'
export type {
  ConsoleStore,
  EntryListQuery,
  EntryPage,
  PruneResult,
  StoreDescription,
} from './stores/contract.ts'
export type { DoctorReport } from './doctor.ts'
