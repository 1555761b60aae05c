import { createContext, createElement, useContext, useEffect, useMemo, type ReactNode } from 'react'
import { CollabClient } from '../client/client.ts'
import type { CollabClientConfig } from '../client/types.ts'

const CollaborationContext = createContext<CollabClient | null>(null)

export interface CollaborationProviderProps extends CollabClientConfig {
  children?: ReactNode
}

/**
 * Gives the collaboration hooks below it their client: where the app is,
 * which headers REST calls carry, pre-issued tokens and the transport
 * factory. Documents opened by several components share one session.
 */
export function CollaborationProvider({ children, ...config }: CollaborationProviderProps) {
  // the config is read once: a new object on each render must not reconnect everything
  const client = useMemo(() => new CollabClient(config), [])
  useEffect(() => () => client.destroy(), [client])
  return createElement(CollaborationContext.Provider, { value: client }, children)
}

/** The client of the nearest `CollaborationProvider` */
export function useCollabClient(): CollabClient {
  const client = useContext(CollaborationContext)
  if (!client) {
    throw new Error('Collaboration hooks must be used inside <CollaborationProvider>')
  }
  return client
}
