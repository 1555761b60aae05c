/**
 * Public API of `adonis-atrium/collaboration`: what `config/collaboration.ts`
 * and app code use. Heavy parts (Yjs, ws, ioredis) load only when the
 * manager is created; app code reaches it through
 * `adonis-atrium/services/collaboration`.
 */
export { defineConfig, defineCollection, defineDocument } from './define_config.ts'
export { relationalStorage } from './storage/relational.ts'
export { FileSystemStorage } from './storage/file_system.ts'
export { InMemoryCollaborationStorage } from './storage/memory.ts'
export * as errors from './errors.ts'
export { onCollaborationError } from './observability.ts'
export { CLOSE_CODES } from './manager.ts'
export type { CollaborationManager } from './manager.ts'
export type * from './types.ts'
