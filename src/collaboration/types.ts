import type { HttpContext } from '@adonisjs/core/http'
import type { ConfigProvider } from '@adonisjs/core/types'

/**
 * Engines a document can run on. `yjs` is the default and the one this
 * release serves; naming another one is a boot error until it ships.
 */
export type CollabEngineName = 'yjs' | 'automerge' | 'partykit' | 'partyserver'

/**
 * What a config may write for an engine: its name, or the neutral alias of
 * the specification (`crdt_a` is `yjs`, `crdt_b` `automerge`, `hosted_a`
 * `partykit`, `hosted_b` `partyserver`).
 */
export type CollabEngineInput = CollabEngineName | 'crdt_a' | 'crdt_b' | 'hosted_a' | 'hosted_b'

/**
 * Who is connected: carried inside the collaboration token.
 */
export interface CollabConnectionContext {
  userId: string
  user?: { name?: string; avatarUrl?: string | null }
}

/**
 * What `authorize` grants on one document.
 */
export interface CollabPermission {
  /** Enforced at the handshake and on every read route */
  canRead: boolean
  /** False makes the connection read-only and version writes answer 403 */
  canWrite: boolean
  /** False makes comment write routes answer 403 */
  canComment: boolean
}

/**
 * Object of a pattern's `:segments` as strings; plain `string` gives a record.
 */
export type DocumentParams<Pattern extends string> = string extends Pattern
  ? Record<string, string>
  : Pattern extends `${infer Head}/${infer Tail}`
    ? SegmentParam<Head> & DocumentParams<Tail>
    : SegmentParam<Pattern>

type SegmentParam<Segment extends string> = Segment extends `:${infer Name}`
  ? { [K in Name]: string }
  : {}

/**
 * Document names a pattern matches: each `:segment` becomes any string.
 */
export type CollabDocumentNameFor<Pattern extends string> =
  Pattern extends `${infer Head}/${infer Tail}`
    ? `${SegmentName<Head>}/${CollabDocumentNameFor<Tail>}`
    : SegmentName<Pattern>

type SegmentName<Segment extends string> = Segment extends `:${string}` ? string : Segment

/**
 * What a declaration's `load` may return: the engine's binary state, an
 * engine document object (a `Y.Doc` on Yjs), or nothing.
 */
export type CollabDocumentSeed = Uint8Array | { [key: string]: any } | null | undefined

/**
 * Everything a pattern can declare about the documents it matches.
 */
export interface CollabDocumentDeclaration<
  P extends Record<string, string> = Record<string, string>,
> {
  engine?: CollabEngineInput
  authorize?: (
    ctx: HttpContext | CollabAuthorizeContext,
    input: { docName: string; params: P }
  ) => CollabPermission | Promise<CollabPermission>
  load?: (input: { docName: string; params: P }) => CollabDocumentSeed | Promise<CollabDocumentSeed>
}

/**
 * What `authorize` receives at the WebSocket handshake, where no HTTP context
 * exists: the identity from the token and the upgrade request.
 */
export interface CollabAuthorizeContext {
  connection: CollabConnectionContext
  request?: import('node:http').IncomingMessage
  auth?: undefined
}

/**
 * Global fallback rule.
 */
export type AuthorizeFn = (
  ctx: HttpContext | CollabAuthorizeContext,
  docName: string
) => CollabPermission | Promise<CollabPermission>

/**
 * The user a route acts for, or null when nobody is signed in.
 */
export interface CollabUser {
  id: string | number
  name?: string | null
  avatarUrl?: string | null
}

export type ResolveUserFn = (ctx: HttpContext) => CollabUser | null | Promise<CollabUser | null>

/**
 * Where a comment points in its document.
 */
export type CommentAnchor =
  | { kind: 'text-range'; start: number; end: number; selectedText: string }
  | { kind: 'canvas-object'; shapeId: string; relativeX: number; relativeY: number }
  | { kind: 'timestamp'; at: number; end?: number }

export type CommentAnchorKind = CommentAnchor['kind']

export interface CollabComment {
  id: string
  documentName: string
  space: string
  anchor: CommentAnchor
  body: string
  userId: string
  authorName?: string | null
  resolvedAt: string | null
  createdAt: string
  updatedAt: string | null
}

export interface CollabVersion {
  /** A UUID on Yjs; on Automerge the version's head (the hash of its change) */
  id: string
  seq: number
  label: string | null
  createdBy: string | null
  createdAt: string
}

export interface PresenceMember {
  userId: string
  name?: string | null
  avatarUrl?: string | null
}

export type LiveDocumentResult<T> =
  { live: true; value: T } | { live: false; reason: 'not-loaded' | 'engine-has-no-live-document' }

export interface ListPageOptions {
  /** 1-based, default 1 */
  page?: number
  /** Default 50, capped at 200 */
  size?: number
}

export interface CollabErrorEvent {
  scope: 'storage' | 'authorize'
  operation: string
  docName?: string
  error: unknown
}

export type CollabStatus = 'connecting' | 'connected' | 'disconnected' | 'error'

/**
 * What `loadDocument` returns: the compacted state plus, for storages with an
 * update log, the updates appended since that state was written.
 */
/** Merges an engine's updates into one (Yjs: `Y.mergeUpdates`) */
export type MergeUpdates = (updates: Uint8Array[]) => Uint8Array

export interface StoredDocument {
  state: Uint8Array
  updates?: Uint8Array[]
}

/**
 * Where documents, versions and comments are kept.
 *
 * `appendUpdate` and `compactDocument` are the durability extension: a storage
 * that implements both receives every update within 250 ms of its arrival
 * (group-committed per document), and the debounced flush only compacts the
 * log into one state.
 */
export interface CollaborationStorage {
  loadDocument(docName: string): Promise<StoredDocument | null>
  saveDocument(docName: string, state: Uint8Array, meta?: Record<string, unknown>): Promise<void>
  listVersions(docName: string, page?: ListPageOptions): Promise<CollabVersion[]>
  saveVersion(docName: string, version: CollabVersion, snapshot: Uint8Array): Promise<void>
  loadVersionSnapshot(docName: string, versionId: string): Promise<Uint8Array | null>
  pruneVersions(options: { keep: number; docName?: string; dryRun?: boolean }): Promise<number>
  listComments(docName: string, space?: string, page?: ListPageOptions): Promise<CollabComment[]>
  getComment?(docName: string, commentId: string): Promise<CollabComment | null>
  saveComment(docName: string, comment: CollabComment): Promise<void>
  deleteComment(docName: string, commentId: string): Promise<void>
  /** Appends one (possibly merged) update to the document's update log */
  appendUpdate?(docName: string, update: Uint8Array): Promise<void>
  /**
   * Replaces the stored state with `state` and empties the update log. With
   * `merge` (several app instances share the document), what is stored is
   * merged into `state` in the same transaction, so a compaction by one
   * instance never drops what another appended.
   */
  compactDocument?(docName: string, state: Uint8Array, merge?: MergeUpdates): Promise<void>
  /** Throws, naming the fix, when the storage cannot work (its tables are missing) */
  assertReady?(): Promise<void>
  /** Releases connections or handles the storage opened */
  close?(): Promise<void>
}

/**
 * Hosted engines (room workers) the app only signs tokens for, and the
 * worker that reads and writes document state through `/state`.
 */
export interface HostedConfig {
  roomHost: string
  party?: string
  jwtSecret?: string
  fetchTimeoutMs?: number
  /**
   * Secret the worker sends in `x-collab-worker-secret` (COLLAB_WORKER_SECRET).
   * Required while the routes are on; it must differ from every token secret.
   */
  workerSecret?: string
}

export interface CollabRoutesConfig {
  enabled?: boolean
  prefix?: string
  middleware?: any[]
  resolveUser?: ResolveUserFn
}

/**
 * `config/collaboration.ts` as written by the app.
 */
export interface CollaborationConfigInput<
  Documents extends Record<string, CollabDocumentDeclaration<any>> = Record<
    string,
    CollabDocumentDeclaration<any>
  >,
> {
  engine?: CollabEngineInput
  engineFor?: (docName: string) => CollabEngineInput | Promise<CollabEngineInput>
  documents?: Documents
  authorize?: AuthorizeFn
  /** A storage, or a factory such as `relationalStorage()` resolved with the app */
  storage?: CollaborationStorage | ConfigProvider<CollaborationStorage>
  path?: string
  debounce?: number
  /** Longest a busy document waits for a compaction, default 10 × debounce */
  maxWait?: number
  /** Longest an update waits before it is appended to the update log, default 100 ms */
  appendInterval?: number
  /** Named connection of `@adonisjs/redis` for the presence roster (`'main'`) */
  redis?: string
  /** Redis URL for the presence roster, for apps without `@adonisjs/redis` */
  redisUrl?: string
  /** Prefix of the presence keys in Redis, default `atrium:collab:` */
  redisPrefix?: string
  /**
   * Several app instances serve the same documents (behind a load balancer):
   * updates and presence fan out through the `redis` connection (or
   * `redisUrl`). Needs a storage every instance shares, such as
   * `relationalStorage()`. Default false.
   */
  multiInstance?: boolean
  tokenSecret?: string
  hosted?: HostedConfig
  routes?: CollabRoutesConfig
  limits?: Partial<import('./limits.ts').CollaborationLimits>
}

/**
 * The validated config, with every default filled in.
 */
export interface CollaborationConfig<
  Documents extends Record<string, CollabDocumentDeclaration<any>> = Record<
    string,
    CollabDocumentDeclaration<any>
  >,
> {
  engine: CollabEngineName
  engineFor?: (docName: string) => CollabEngineInput | Promise<CollabEngineInput>
  documents: Documents
  authorize?: AuthorizeFn
  storage: CollaborationStorage
  /** True when no storage was configured (in-memory fallback) */
  storageIsDefault: boolean
  path: string
  debounce: number
  maxWait: number
  appendInterval: number
  redis?: string
  redisUrl?: string
  /** The ioredis client of the `redis` connection, resolved from the container */
  redisClient?: PresenceRedisClient
  redisPrefix: string
  multiInstance: boolean
  tokenSecret?: string
  hosted?: Required<Pick<HostedConfig, 'roomHost' | 'party' | 'fetchTimeoutMs'>> &
    Pick<HostedConfig, 'jwtSecret' | 'workerSecret'>
  routes: Required<Omit<CollabRoutesConfig, 'resolveUser'>> & { resolveUser?: ResolveUserFn }
  limits: import('./limits.ts').CollaborationLimits
  /** Application key fallback for the token secret, set by the provider */
  appKey?: string
}

/**
 * The Redis commands the presence roster sends (an ioredis client fits).
 */
export type PresenceRedisClient = import('ioredis').Redis

/**
 * Union of the document patterns a config declares.
 */
export type InferCollabDocumentNames<Config> = Config extends { documents: infer Documents }
  ? Extract<keyof Documents, string>
  : string

/**
 * What `GET /token` and `collaboration.issueToken()` return.
 */
export interface CollabTokenInfo {
  token: string
  wsUrl: string
  engine: CollabEngineName
  expiresAt?: string
  /** On Automerge: the automerge-repo document id to `repo.find()` */
  documentId?: string
}

/**
 * The payload a collaboration token carries.
 */
export interface CollabTokenPayload {
  userId: string
  docName: string
  user?: { name?: string; avatarUrl?: string | null }
  exp: number
  /**
   * Set on hosted-engine tokens of a user who may not write: the room worker
   * cannot ask `authorize`, so the token carries the decision.
   */
  readOnly?: true
}

/**
 * Augmented by config/collaboration.ts with `names`, the union of its
 * document patterns, so app code can type document names.
 */
export interface CollaborationDocuments {}
