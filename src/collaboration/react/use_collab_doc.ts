import { useCallback, useEffect, useMemo, useSyncExternalStore } from 'react'
import type { CollabTokenInfo } from '../client/types.ts'
import type { DocSession } from '../client/session.ts'
import { useCollabClient } from './context.ts'

/**
 * The session of `docName`, held open while the component is mounted,
 * and its state (re-rendering on each change).
 */
export function useDocSession(docName: string, token?: CollabTokenInfo) {
  const client = useCollabClient()
  const session = useMemo(() => client.session(docName, { token }), [client, docName])
  useEffect(() => session.retain(), [session])
  const subscribe = useCallback((listener: () => void) => session.subscribe(listener), [session])
  const snapshot = useSyncExternalStore(subscribe, session.getSnapshot.bind(session))
  return { session, snapshot }
}

export interface UseCollabDocInput {
  docName: string
  /** A token for the first connection, issued by the server-rendered page */
  token?: CollabTokenInfo
}

/**
 * A live Yjs document: `doc` (the `Y.Doc`), `collabDoc` (key-value
 * access), `status`, `synced` (the server's state is applied) and `error`.
 */
export function useCollabDoc({ docName, token }: UseCollabDocInput) {
  const { session, snapshot } = useDocSession(docName, token)
  return {
    doc: session.doc,
    collabDoc: session.collabDoc,
    session: session as DocSession,
    status: snapshot.status,
    synced: snapshot.synced,
    error: snapshot.error,
  }
}
