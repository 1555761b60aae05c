import type { IncomingMessage } from 'node:http'
import type { WebSocket } from 'ws'
import type { CollaborationLimits } from '../limits.ts'
import type { DocumentCluster } from '../cluster/redis_cluster.ts'
import type {
  CollabConnectionContext,
  CollabDocumentSeed,
  CollabEngineName,
  CollabPermission,
  CollaborationStorage,
  LiveDocumentResult,
} from '../types.ts'

/**
 * One accepted WebSocket connection, already authenticated and authorized.
 */
export interface CollabSession {
  id: string
  docName: string
  context: CollabConnectionContext
  permission: CollabPermission
  /** The upgrade request; released once the connection has joined its document */
  request?: IncomingMessage
  /** Messages the client sent while the handshake was checked */
  buffered: Buffer[]
  /** Stops buffering: the engine reads the socket itself from now on */
  stopBuffering(): void
}

/**
 * What the manager gives an engine: storage, timings and the hooks the
 * engine calls back.
 */
export interface CollabEngineHost {
  storage: CollaborationStorage
  debounce: number
  maxWait: number
  appendInterval: number
  limits: CollaborationLimits
  /** Shares open documents with the other app instances (multiInstance) */
  cluster?: DocumentCluster
  /** The declaration's `load` for a never-stored document (null without one) */
  seed(docName: string): Promise<CollabDocumentSeed>
  onJoin(session: CollabSession): void
  onLeave(session: CollabSession): void
}

/**
 * The seam between the engine-independent manager and one CRDT engine. The
 * manager owns tokens, authorization, versions' bookkeeping, comments and
 * presence; the engine owns the wire protocol, the live documents and their
 * binary state.
 */
export interface CollabEngine {
  readonly name: CollabEngineName
  /** Serves an authorized socket for the session's document */
  handleConnection(socket: WebSocket, session: CollabSession): void
  hasLiveDocument(docName: string): boolean
  withLiveDocument<T>(
    docName: string,
    run: (doc: any) => T | Promise<T>
  ): Promise<LiveDocumentResult<T>>
  /** The live state when open, else the stored one (an empty document when never stored) */
  getDocumentState(docName: string): Promise<Uint8Array>
  /** The document's text in the engine's text layout, empty otherwise */
  textOf(state: Uint8Array): string
  /** Merges a state into the document (live or stored) */
  applyState(docName: string, state: Uint8Array): Promise<void>
  /** Writes the content of `state` into the document as new changes */
  replaceContent(docName: string, state: Uint8Array): Promise<void>
  /** Characters added and removed going from `a` to `b` */
  diff(a: Uint8Array, b: Uint8Array): { added: number; removed: number }
  /**
   * Engines whose versions are points of their history (Automerge's heads)
   * mark one and return its id and state; others get a UUID and the state
   */
  versionPoint?(docName: string): Promise<{ id: string; state: Uint8Array }>
  openDocuments(): string[]
  /** Persists every dirty document */
  flushAll(): Promise<void>
  /** Flushes, closes every socket and unloads every document */
  close(): Promise<void>
}
