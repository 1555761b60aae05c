/**
 * React bindings of Atrium collaboration: `CollaborationProvider` and the
 * hooks. React is an optional peer; the editor adapters take the editor's
 * own objects and import no editor.
 */
export {
  CollaborationProvider,
  useCollabClient,
  type CollaborationProviderProps,
} from './context.ts'
export { useCollabDoc, useDocSession, type UseCollabDocInput } from './use_collab_doc.ts'
export { useAwareness, type AwarenessPeer, type UseAwarenessInput } from './use_awareness.ts'
export {
  useCollabEditor,
  useCanvasSync,
  type UseCollabEditorInput,
  type UseCanvasSyncInput,
} from './use_collab_editor.ts'
export { useComments, type NewComment, type UseCommentsInput } from './use_comments.ts'
export { useVersions } from './use_versions.ts'
export { useAutomergeDoc, useCrdtBDoc, type AutomergeHandleLike } from './use_automerge_doc.ts'
export {
  createTextAdapter,
  createExcalidrawAdapter,
  createTldrawAdapter,
  createCanvasAdapterA,
  createCanvasAdapterB,
  type EditorAdapter,
  type EditorBinding,
  type ExcalidrawApiLike,
  type ExcalidrawElementLike,
  type TldrawRecords,
} from '../client/adapters.ts'
export { CollabDoc } from '../client/collab_doc.ts'
export { CollabRestError } from '../client/rest.ts'
export type * from '../client/types.ts'
