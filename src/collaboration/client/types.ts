import type * as Y from 'yjs'
import type { CollabEngineName, CollabStatus, CollabTokenInfo } from '../types.ts'
import type { TokenSource } from './token_source.ts'

export type {
  CollabComment,
  CollabEngineName,
  CollabStatus,
  CollabTokenInfo,
  CollabVersion,
  CommentAnchor,
  CommentAnchorKind,
} from '../types.ts'

/** Headers sent with every REST call (the app's session cookie travels on its own) */
export type HeadersSource = () => HeadersLike | Promise<HeadersLike>

/** A `Headers` object, a record or a list of pairs */
export type HeadersLike = ConstructorParameters<typeof Headers>[0]

/**
 * What the browser client needs to reach the app: every field is optional.
 */
export interface CollabClientConfig {
  /** Origin (and base path) of the app; defaults to the page's origin */
  baseUrl?: string
  /** Prefix of the collaboration REST routes, `/collaboration` by default */
  prefix?: string
  /** Extra headers for REST calls (an `authorization` header, a CSRF token) */
  getHeaders?: HeadersSource
  /** `fetch` to use; the global one by default */
  fetchImpl?: typeof fetch
  /** `credentials` of REST calls; `same-origin` by default */
  credentials?: RequestInit['credentials']
  /**
   * Tokens issued by the server-rendered page, by document name. Used for
   * the first connection only; an expired or malformed entry is ignored and
   * the token endpoint is asked instead.
   */
  initialTokens?: Record<string, CollabTokenInfo>
  /** Builds the transport of a document; `defaultTransportFactory` by default */
  createTransport?: TransportFactory
  /** WebSocket constructor; the global one by default */
  WebSocketImpl?: typeof WebSocket
  /** Longest wait between two reconnection attempts, in ms (10 s by default) */
  maxBackoffMs?: number
}

/**
 * What a transport is given besides the token: the client config and the
 * document's token source, to refresh the token before it expires.
 */
export interface TransportContext {
  config: CollabClientConfig
  tokens: TokenSource
}

/**
 * What the hooks use of a Yjs `Awareness`; the Automerge transport offers
 * the same over automerge-repo's `Presence`.
 */
export interface PresenceAwareness {
  readonly clientID: number
  getStates(): Map<number, Record<string, any>>
  getLocalState(): Record<string, any> | null
  setLocalState(state: Record<string, any> | null): void
  setLocalStateField(field: string, value: unknown): void
  on(event: 'change', listener: (...args: any[]) => void): void
  off(event: 'change', listener: (...args: any[]) => void): void
}

/**
 * A live connection of one document to its engine. Status changes are
 * announced through `subscribe`; `destroy` closes it for good.
 */
export interface CollabTransport {
  /** The engine document: a `Y.Doc` for Yjs, a `DocHandle` for Automerge */
  readonly doc: unknown
  /** Presence: the Yjs awareness, or its Automerge counterpart */
  readonly awareness?: PresenceAwareness
  /** The last failure (a final close code, a refused token), or null */
  readonly error?: Error | null
  getStatus(): CollabStatus
  /** True once the server's initial state is applied */
  isSynced?(): boolean
  subscribe(listener: () => void): () => void
  destroy(): void
}

export type TransportFactory = (
  info: CollabTokenInfo,
  doc: Y.Doc,
  docName: string,
  context: TransportContext
) => CollabTransport | Promise<CollabTransport>

/** What `DocSession.getSnapshot()` returns: a new object on every change */
export interface DocSessionSnapshot {
  status: CollabStatus
  synced: boolean
  error: Error | null
  engine: CollabEngineName | null
  /** The open transport (its awareness, its engine document), or null */
  transport: CollabTransport | null
}
