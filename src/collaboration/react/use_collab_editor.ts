import { useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from 'react'
import {
  bindExcalidrawScene,
  type EditorAdapter,
  type ExcalidrawApiLike,
} from '../client/adapters.ts'
import type { CollabDoc } from '../client/collab_doc.ts'
import { useAwareness } from './use_awareness.ts'
import { useDocSession } from './use_collab_doc.ts'

export interface UseCollabEditorInput<S> {
  docName: string
  /** Names the editor's part of the document (several editors can share one) */
  editorId: string
  adapter: EditorAdapter<S>
  /** The document to bind instead of the session's */
  doc?: CollabDoc
}

/**
 * An editor's state bound to a document through an adapter: `state` follows
 * local and remote changes, `update(next)` writes only the difference.
 */
export function useCollabEditor<S>({ docName, editorId, adapter, doc }: UseCollabEditorInput<S>) {
  const { session, snapshot } = useDocSession(docName)
  const { peers } = useAwareness({ docName })
  const target = doc ?? session.collabDoc
  const binding = useMemo(() => adapter.create(target, editorId), [target, editorId, adapter])
  const state = useRef<S>(adapter.empty())

  const subscribe = useCallback(
    (listener: () => void) => {
      state.current = binding.read()
      return binding.observe(() => {
        state.current = binding.read()
        listener()
      })
    },
    [binding]
  )
  const current = useSyncExternalStore(subscribe, () => state.current)
  const update = useCallback((next: S) => binding.write(next), [binding])

  return { state: current, update, status: snapshot.status, synced: snapshot.synced, peers }
}

export interface UseCanvasSyncInput {
  doc: CollabDoc
  /** Excalidraw's imperative API (from its `excalidrawAPI` callback); null until mounted */
  excalidrawAPI: ExcalidrawApiLike | null | undefined
  /** Document key holding the scene, `excalidraw` by default */
  editorId?: string
}

/**
 * Keeps an Excalidraw canvas in sync with the document: the scene is
 * last-write-wins on one key. (For per-element merging use
 * `useCollabEditor` with `createExcalidrawAdapter`.)
 */
export function useCanvasSync({ doc, excalidrawAPI, editorId = 'excalidraw' }: UseCanvasSyncInput) {
  useEffect(
    () => (excalidrawAPI ? bindExcalidrawScene(doc, excalidrawAPI, editorId) : undefined),
    [doc, excalidrawAPI, editorId]
  )
}
