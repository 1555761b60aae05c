/**
 * Public API of `adonis-atrium/collaboration`. Heavy parts (Yjs, ws, ioredis)
 * load only when the manager is created.
 */
export {
  defineConfig,
  defineCollection,
  defineDocument,
  matchDocumentPattern,
  documentPatternParams,
} from './define_config.ts'
export * as errors from './errors.ts'
export {
  CollabForbiddenError,
  CollabAuthorizationError,
  CollabUnauthorizedError,
  CollabTokenSecretMissingError,
} from './errors.ts'
export {
  COLLAB_ERROR_EVENT,
  collaborationEvents,
  onCollaborationError,
  setCollaborationLogger,
  reportCollaborationError,
} from './observability.ts'
export {
  COLLAB_TOKEN_TTL_SECONDS,
  issueToken,
  buildWsUrl,
  signCollabToken,
  verifyCollabToken,
  verifySelfHostedToken,
  signHostedToken,
  verifyHostedToken,
  resolveTokenSecret,
  secretsMatch,
} from './tokens.ts'
export { issueCollaborationToken } from './issue.ts'
export { InMemoryCollaborationStorage } from './storage/memory.ts'
export { FileSystemStorage } from './storage/file_system.ts'
export {
  relationalStorage,
  RelationalCollaborationStorage,
  createCollaborationTables,
  dropCollaborationTables,
  collaborationTableNames,
} from './storage/relational.ts'
export { collaborationRoutes, defaultResolveUser, canMutateComment } from './http/routes.ts'
export type { CollaborationRoutesOptions } from './http/routes.ts'
export { collaboration } from './current.ts'
export { CollaborationManager, CollabComments, CLOSE_CODES } from './manager.ts'
export type { CollabEngine, CollabEngineHost, CollabSession } from './engines/engine.ts'
export type * from './types.ts'
