/**
 * Browser client of Atrium collaboration, free of any framework and of
 * server code: document sessions, transports, token handling and the REST
 * client. `adonis-atrium/collaboration/react` builds its hooks on it.
 */
export { CollabClient } from './client.ts'
export { DocSession, type DocSessionOptions } from './session.ts'
export { CollabDoc, COLLAB_DOC_ORIGIN } from './collab_doc.ts'
export { TokenSource } from './token_source.ts'
export {
  SelfHostedCollabTransport,
  HostedCollabTransport,
  HostedACollabTransport,
  HostedBCollabTransport,
  CollabConnectionError,
} from './yjs_transport.ts'
export { defaultTransportFactory } from './transports.ts'
export {
  AutomergeCollabTransport,
  createAutomergeTransport,
  type AutomergeModules,
  type AutomergeTransportOptions,
} from './automerge_transport.ts'
export {
  AutomergeAwareness,
  type AutomergePresenceClass,
  type AutomergePresenceOptions,
} from './automerge_presence.ts'
export {
  CollabRestError,
  collabFetch,
  fetchToken,
  listComments,
  createComment,
  resolveComment,
  deleteComment,
  listVersions,
  createVersion,
  restoreVersion,
  fetchState,
  type CreateCommentInput,
  type PageInput,
} from './rest.ts'
export {
  createTextAdapter,
  createExcalidrawAdapter,
  createTldrawAdapter,
  createCanvasAdapterA,
  createCanvasAdapterB,
  bindExcalidrawScene,
  type EditorAdapter,
  type ExcalidrawApiLike,
  type ExcalidrawElementLike,
  type TldrawRecords,
  type EditorBinding,
} from './adapters.ts'
export type * from './types.ts'
