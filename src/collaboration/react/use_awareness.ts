import { useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from 'react'
import type { PresenceAwareness } from '../client/types.ts'
import { useDocSession } from './use_collab_doc.ts'

/** Another user's presence: its awareness client id and what it published */
export interface AwarenessPeer {
  clientId: number
  user?: { name?: string; color?: string; [key: string]: unknown }
  [field: string]: unknown
}

export interface UseAwarenessInput {
  docName: string
  /** Published as the `user` field of this client's state */
  user?: { name?: string; color?: string; [key: string]: unknown }
}

const NO_PEERS: AwarenessPeer[] = []

/**
 * Presence on a document: `peers` are the other connected clients (this
 * one excluded), `setLocalState`/`setLocalStateField` publish this one's.
 */
export function useAwareness({ docName, user }: UseAwarenessInput) {
  const { snapshot } = useDocSession(docName)
  const awareness: PresenceAwareness | null = snapshot.transport?.awareness ?? null
  const peers = useRef<AwarenessPeer[]>(NO_PEERS)

  const subscribe = useCallback(
    (listener: () => void) => {
      if (!awareness) return () => {}
      const onChange = () => {
        peers.current = [...awareness.getStates()]
          .filter(([clientId]) => clientId !== awareness.clientID)
          .map(([clientId, state]) => ({ ...state, clientId }))
          .sort((a, b) => a.clientId - b.clientId)
        listener()
      }
      onChange()
      awareness.on('change', onChange)
      return () => awareness.off('change', onChange)
    },
    [awareness]
  )
  const current = useSyncExternalStore(subscribe, () => (awareness ? peers.current : NO_PEERS))

  const userKey = JSON.stringify(user ?? null)
  useEffect(() => {
    if (awareness && user) awareness.setLocalStateField('user', user)
  }, [awareness, userKey])

  return useMemo(
    () => ({
      peers: current,
      status: snapshot.status,
      awareness,
      setLocalState: (state: Record<string, unknown> | null) => awareness?.setLocalState(state),
      setLocalStateField: (field: string, value: unknown) =>
        awareness?.setLocalStateField(field, value),
    }),
    [current, snapshot.status, awareness]
  )
}
