import { randomUUID } from 'node:crypto'
import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { WebSocket, WebSocketServer } from 'ws'
import type { HttpContext } from '@adonisjs/core/http'
import debug from './debug.ts'
import { engineOf, findDocumentDeclaration } from './define_config.ts'
import { issueCollaborationToken, type IssueTokenInput } from './issue.ts'
import {
  CollabAuthorizationError,
  CollabConfigError,
  CollabNotFoundError,
  CollabTokenSecretMissingError,
} from './errors.ts'
import { reportCollaborationError, warnCollaboration } from './observability.ts'
import type { PresenceRoster } from './presence.ts'
import { resolveTokenSecret, verifyCollabToken } from './tokens.ts'
import { CLOSE_CODES } from './server/close_codes.ts'
import { SocketGuard, refuseUpgrade } from './server/connection.ts'
import type { CollabEngine, CollabSession } from './engines/engine.ts'
import type {
  CollabAuthorizeContext,
  CollabConnectionContext,
  CollabComment,
  CollabEngineName,
  CollabPermission,
  CollabVersion,
  CollaborationConfig,
  CommentAnchor,
  ListPageOptions,
  LiveDocumentResult,
  PresenceMember,
} from './types.ts'

const DENY: CollabPermission = Object.freeze({
  canRead: false,
  canWrite: false,
  canComment: false,
})

export { CLOSE_CODES } from './server/close_codes.ts'

/** The possible grants, shared (frozen) by every connection */
const PERMISSIONS = new Map<string, CollabPermission>()

function normalizePermission(
  value: Partial<CollabPermission> | null | undefined
): CollabPermission {
  if (!value || value.canRead !== true) {
    return DENY
  }
  const canWrite = value.canWrite === true
  const canComment = value.canComment === true
  const key = `${canWrite}:${canComment}`
  let permission = PERMISSIONS.get(key)
  if (!permission) {
    permission = Object.freeze({ canRead: true, canWrite, canComment })
    PERMISSIONS.set(key, permission)
  }
  return permission
}

/**
 * Comments of the documents, kept in the configured storage.
 */
export class CollabComments {
  constructor(protected manager: CollaborationManager) {}

  /** Comments oldest first, optionally of one space and one page */
  list(docName: string, space?: string, page?: ListPageOptions) {
    return this.manager.config.storage.listComments(docName, space, page)
  }

  async get(docName: string, commentId: string): Promise<CollabComment | null> {
    const storage = this.manager.config.storage
    if (storage.getComment) {
      return storage.getComment(docName, commentId)
    }
    const comments = await storage.listComments(docName)
    return comments.find(({ id }) => id === commentId) ?? null
  }

  async create(
    docName: string,
    input: {
      space: string
      anchor: CommentAnchor
      body: string
      userId: string
      authorName?: string | null
    }
  ): Promise<CollabComment> {
    const comment: CollabComment = {
      id: randomUUID(),
      documentName: docName,
      space: input.space,
      anchor: input.anchor,
      body: input.body,
      userId: String(input.userId),
      authorName: input.authorName ?? null,
      resolvedAt: null,
      createdAt: new Date().toISOString(),
      updatedAt: null,
    }
    await this.manager.config.storage.saveComment(docName, comment)
    return comment
  }

  /** Sets or clears `resolvedAt`; null for an unknown comment */
  async resolve(
    docName: string,
    commentId: string,
    resolved = true
  ): Promise<CollabComment | null> {
    const comment = await this.get(docName, commentId)
    if (!comment) {
      return null
    }
    const now = new Date().toISOString()
    const next = {
      ...comment,
      resolvedAt: resolved ? (comment.resolvedAt ?? now) : null,
      updatedAt: now,
    }
    await this.manager.config.storage.saveComment(docName, next)
    return next
  }

  /** False for an unknown comment */
  async remove(docName: string, commentId: string): Promise<boolean> {
    if (!(await this.get(docName, commentId))) {
      return false
    }
    await this.manager.config.storage.deleteComment(docName, commentId)
    return true
  }
}

/**
 * The collaboration server: routes WebSocket upgrades to engines after
 * checking tokens and authorization, and exposes documents, versions,
 * comments and presence to app code.
 */
export class CollaborationManager {
  readonly config: CollaborationConfig
  readonly comments: CollabComments
  readonly presence?: PresenceRoster
  #engines = new Map<CollabEngineName, CollabEngine>()
  /** The upgrade listener added to each attached server */
  #servers = new Map<Server, (request: IncomingMessage, socket: Duplex, head: Buffer) => void>()
  #wss?: WebSocketServer
  #connectionIds = 0
  #locks = new Map<string, Promise<unknown>>()
  #closed = false

  constructor(
    config: CollaborationConfig,
    options: { engines?: CollabEngine[]; presence?: PresenceRoster; wss?: WebSocketServer } = {}
  ) {
    this.config = config
    this.comments = new CollabComments(this)
    this.presence = options.presence
    this.#wss = options.wss
    for (const engine of options.engines ?? []) {
      this.#engines.set(engine.name, engine)
    }
  }

  /**
   * Builds a manager with the Yjs engine (and the Redis presence roster when
   * `redis` or `redisUrl` is set), importing each only when used.
   */
  static async create(config: CollaborationConfig) {
    const { WebSocketServer } = await import('ws')
    const { YjsEngine } = await import('./engines/yjs/engine.ts')
    let presence: PresenceRoster | undefined
    if (config.redisClient || config.redisUrl) {
      const { PresenceRoster: Roster } = await import('./presence.ts')
      presence = config.redisClient
        ? new Roster(config.redisClient, config.redisPrefix)
        : await Roster.connect(config.redisUrl!, config.redisPrefix)
    }
    const manager: CollaborationManager = new CollaborationManager(config, {
      presence,
      wss: new WebSocketServer({
        noServer: true,
        maxPayload: config.limits.maxPayload,
        perMessageDeflate: false,
      }),
    })
    manager.#engines.set(
      'yjs',
      new YjsEngine({
        storage: config.storage,
        debounce: config.debounce,
        maxWait: config.maxWait,
        appendInterval: config.appendInterval,
        limits: config.limits,
        seed: (docName) => manager.#seed(docName),
        onJoin: (session) => manager.#onJoin(session),
        onLeave: (session) => manager.#onLeave(session),
      })
    )
    for (const pattern of Object.keys(config.documents)) {
      if (!pattern.includes(':')) {
        warnCollaboration(
          `collaboration document pattern "${pattern}" has no ":segment": it matches exactly one document`
        )
      }
    }
    if (config.storageIsDefault && process.env.NODE_ENV !== 'test') {
      warnCollaboration(
        'collaboration uses in-memory storage: every document is lost on restart. Set "storage" in config/collaboration.ts'
      )
    }
    return manager
  }

  /**
   * Issues a token outside the routes (for server-rendered pages), checking
   * the document's rule as the handshake would.
   */
  issueToken(input: IssueTokenInput, options: { baseUrl?: string } = {}) {
    return issueCollaborationToken(this, input, options)
  }

  get engine(): CollabEngineName {
    return this.config.engine
  }

  async #seed(docName: string) {
    const match = findDocumentDeclaration(this.config.documents, docName)
    if (!match?.declaration.load) {
      return null
    }
    return match.declaration.load({ docName, params: match.params })
  }

  #onJoin(session: CollabSession) {
    this.presence
      ?.join(session.docName, session.id, {
        userId: session.context.userId,
        name: session.context.user?.name ?? null,
        avatarUrl: session.context.user?.avatarUrl ?? null,
      })
      .catch(() => {})
  }

  #onLeave(session: CollabSession) {
    this.presence?.leave(session.docName, session.id).catch(() => {})
  }

  /**
   * The permission of `ctx` on `docName`: the first matching pattern's rule,
   * then the global rule, else deny. A throwing rule is reported and raised
   * as the retryable `CollabAuthorizationError`.
   */
  async authorize(
    ctx: HttpContext | CollabAuthorizeContext,
    docName: string
  ): Promise<CollabPermission> {
    const match = findDocumentDeclaration(this.config.documents, docName)
    try {
      if (match?.declaration.authorize) {
        return normalizePermission(
          await match.declaration.authorize(ctx, { docName, params: match.params })
        )
      }
      if (this.config.authorize) {
        return normalizePermission(await this.config.authorize(ctx, docName))
      }
    } catch (error) {
      reportCollaborationError({ scope: 'authorize', operation: 'authorize', docName, error })
      throw new CollabAuthorizationError(undefined, { cause: error })
    }
    return DENY
  }

  /**
   * True when some rule (pattern or global) could grant access to the document.
   */
  hasAuthorizeRule(docName: string) {
    return Boolean(
      findDocumentDeclaration(this.config.documents, docName)?.declaration.authorize ??
      this.config.authorize
    )
  }

  /**
   * The engine of a document: `engineFor`, else the first matching
   * pattern's `engine`, else the default; aliases become engine names.
   */
  async engineFor({ docName }: { docName: string }): Promise<CollabEngineName> {
    const chosen = this.config.engineFor
      ? await this.config.engineFor(docName)
      : (findDocumentDeclaration(this.config.documents, docName)?.declaration.engine ??
        this.config.engine)
    const engine = engineOf(chosen)
    if (!engine) {
      throw new CollabConfigError(
        `"engineFor" in config/collaboration.ts returned ${JSON.stringify(chosen)} for "${docName}", which is not an engine`
      )
    }
    return engine
  }

  async #engineOf(docName: string): Promise<CollabEngine | null> {
    return this.#engines.get(await this.engineFor({ docName })) ?? null
  }

  async #requireEngine(docName: string): Promise<CollabEngine> {
    const engine = await this.#engineOf(docName)
    if (!engine) {
      // hosted documents live in the worker; the app keeps what the worker posts
      return this.#engines.get('yjs')!
    }
    return engine
  }

  async getDocumentState({ docName }: { docName: string }) {
    const engine = await this.#requireEngine(docName)
    return engine.getDocumentState(docName)
  }

  async getDocumentText({ docName }: { docName: string }) {
    const engine = await this.#requireEngine(docName)
    return engine.textOf(await engine.getDocumentState(docName))
  }

  async withLiveDocument<T>({
    docName,
    run,
  }: {
    docName: string
    run: (doc: any) => T | Promise<T>
  }): Promise<LiveDocumentResult<T>> {
    const engine = await this.#engineOf(docName)
    if (!engine) {
      return { live: false, reason: 'engine-has-no-live-document' }
    }
    return engine.withLiveDocument(docName, run)
  }

  async hasLiveDocument({ docName }: { docName: string }) {
    const engine = await this.#engineOf(docName)
    return engine?.hasLiveDocument(docName) ?? false
  }

  async getVersionState({ docName, versionId }: { docName: string; versionId: string }) {
    const snapshot = await this.config.storage.loadVersionSnapshot(docName, versionId)
    if (!snapshot) {
      throw new CollabNotFoundError(`Unknown version "${versionId}" of "${docName}"`)
    }
    return snapshot
  }

  #exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(key) ?? Promise.resolve()
    const next = previous.then(task, task)
    const settled = next.catch(() => {})
    this.#locks.set(key, settled)
    settled.then(() => {
      if (this.#locks.get(key) === settled) {
        this.#locks.delete(key)
      }
    })
    return next
  }

  async #snapshot(
    docName: string,
    createdBy: string | null,
    label: string | null,
    state?: Uint8Array
  ) {
    const snapshot = state ?? (await this.getDocumentState({ docName }))
    const [latest] = await this.config.storage.listVersions(docName, { page: 1, size: 1 })
    const version: CollabVersion = {
      id: randomUUID(),
      seq: (latest?.seq ?? 0) + 1,
      label,
      createdBy,
      createdAt: new Date().toISOString(),
    }
    await this.config.storage.saveVersion(docName, version, snapshot)
    return version
  }

  createVersion({
    docName,
    createdBy,
    label,
  }: {
    docName: string
    createdBy: string | null
    label?: string | null
  }) {
    return this.#exclusive(`versions:${docName}`, () =>
      this.#snapshot(docName, createdBy === null ? null : String(createdBy), label ?? null)
    )
  }

  listVersions({ docName, page }: { docName: string; page?: ListPageOptions }) {
    return this.config.storage.listVersions(docName, page)
  }

  /**
   * Snapshots the current state as `restored from #<seq>`, then writes the
   * version's content into the live document as new changes.
   */
  async restoreVersion({
    docName,
    versionId,
    restoredBy,
  }: {
    docName: string
    versionId: string
    restoredBy: string | null
  }) {
    await this.#exclusive(`versions:${docName}`, async () => {
      const snapshot = await this.getVersionState({ docName, versionId })
      const all = await this.config.storage.listVersions(docName)
      const target = all.find(({ id }) => id === versionId)
      await this.#snapshot(
        docName,
        restoredBy === null ? null : String(restoredBy),
        `restored from #${target?.seq ?? '?'}`
      )
      const engine = await this.#requireEngine(docName)
      await engine.replaceContent(docName, snapshot)
    })
  }

  async diffVersions({ docName, aId, bId }: { docName: string; aId: string; bId: string }) {
    const [a, b] = await Promise.all([
      this.getVersionState({ docName, versionId: aId }),
      this.getVersionState({ docName, versionId: bId }),
    ])
    const engine = await this.#requireEngine(docName)
    return engine.diff(a, b)
  }

  pruneVersions(options: { keep: number; docName?: string; dryRun?: boolean }) {
    if (!Number.isInteger(options.keep) || options.keep < 0) {
      throw new CollabConfigError(
        'pruneVersions: "keep" must be a non-negative integer (versions kept per document)'
      )
    }
    return this.config.storage.pruneVersions(options)
  }

  /**
   * Merges a state (from a hosted worker, an import) into the document.
   */
  async persistDocument({ docName, state }: { docName: string; state: Uint8Array }) {
    if (this.config.storageIsDefault) {
      throw new CollabConfigError(
        'persistDocument needs a configured storage: set "storage" in config/collaboration.ts'
      )
    }
    const engine = await this.#requireEngine(docName)
    await engine.applyState(docName, state)
  }

  async listPresence({ docName }: { docName: string }): Promise<PresenceMember[]> {
    return this.presence ? this.presence.list(docName) : []
  }

  /**
   * Names of the documents open in memory.
   */
  openDocuments() {
    return [...this.#engines.values()].flatMap((engine) => engine.openDocuments())
  }

  /**
   * Handles WebSocket upgrades under `path` on a Node.js HTTP server.
   * Calling it twice with the same server does nothing.
   */
  attach(server: Server) {
    if (this.#servers.has(server)) {
      return
    }
    const listener = (request: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.#onUpgrade(server, request, socket, head)
    this.#servers.set(server, listener)
    server.on('upgrade', listener)
    debug('listening for upgrades under %s', this.config.path)
  }

  /**
   * The document an upgrade URL names: a string, `invalid` for a malformed
   * name under the collaboration path, `null` for another path.
   */
  #docNameOf(url: string): string | null | 'invalid' {
    const pathname = url.split('?')[0]
    const prefix = this.config.path === '/' ? '/' : `${this.config.path}/`
    if (!pathname.startsWith(prefix)) {
      return pathname === this.config.path ? 'invalid' : null
    }
    try {
      const name = pathname.slice(prefix.length).split('/').map(decodeURIComponent).join('/')
      return name && !name.split('/').some((segment) => !segment) ? name : 'invalid'
    } catch {
      return 'invalid'
    }
  }

  #onUpgrade(server: Server, request: IncomingMessage, socket: Duplex, head: Buffer) {
    try {
      this.#route(server, request, socket, head)
    } catch (error) {
      // an upgrade listener that throws would crash the process
      reportCollaborationError({ scope: 'authorize', operation: 'upgrade', error })
      refuseUpgrade(socket, 500, 'E_COLLAB_UPGRADE', 'The upgrade could not be handled')
    }
  }

  #route(server: Server, request: IncomingMessage, socket: Duplex, head: Buffer) {
    const docName = this.#docNameOf(request.url ?? '')
    if (docName === null) {
      // another upgrade listener (the app's own) may serve this path; with
      // none, Node would have destroyed the socket: do it, with a 404
      if (server.listenerCount('upgrade') <= 1) {
        refuseUpgrade(socket, 404, 'E_COLLAB_NOT_FOUND', 'No WebSocket endpoint at this path')
      }
      return
    }
    if (docName === 'invalid') {
      return refuseUpgrade(
        socket,
        400,
        'E_COLLAB_INVALID_DOCUMENT',
        `Expected ${this.config.path}/<document name> with non-empty, URL-encoded segments`
      )
    }
    if (this.#closed || !this.#wss) {
      return refuseUpgrade(socket, 503, 'E_COLLAB_SHUTTING_DOWN', 'The server is shutting down')
    }
    // the token is checked before the upgrade: an unauthenticated client never
    // gets a WebSocket, so it never reaches the frame parser
    const token = new URL(request.url ?? '/', 'http://localhost').searchParams.get('token')
    let payload
    try {
      payload = verifyCollabToken(token, resolveTokenSecret(this.config.tokenSecret), docName)
    } catch (error) {
      if (error instanceof CollabTokenSecretMissingError) {
        return refuseUpgrade(socket, 500, error.code!, error.message)
      }
      throw error
    }
    if (!payload) {
      debug('refused "%s": invalid token', docName)
      return refuseUpgrade(
        socket,
        401,
        'E_COLLAB_INVALID_TOKEN',
        'Missing, invalid or expired token for this document: request a new one'
      )
    }
    const context = payload.user
      ? { userId: payload.userId, user: payload.user }
      : { userId: payload.userId }
    this.#wss.handleUpgrade(request, socket, head, (ws) => {
      // the guard attaches the error listener before anything else can fail
      const guard = new SocketGuard(ws, this.config.limits)
      this.#accept(ws, guard, request, docName, context).catch((error) => {
        reportCollaborationError({ scope: 'authorize', operation: 'handshake', docName, error })
        guard.close(CLOSE_CODES.internalError, 'handshake failed')
      })
    })
  }

  async #accept(
    ws: WebSocket,
    guard: SocketGuard,
    request: IncomingMessage,
    docName: string,
    context: CollabConnectionContext
  ) {
    const buffered: Buffer[] = []
    // what arrives during authorization is kept, within the rate limit and one
    // message's worth of bytes (plus headroom for the first small messages)
    let bufferedBytes = 0
    const maxBuffered = this.config.limits.maxPayload + 64 * 1024
    const buffer = (data: Buffer) => {
      if (!guard.admit()) {
        return
      }
      bufferedBytes += data.byteLength
      if (bufferedBytes > maxBuffered) {
        guard.close(CLOSE_CODES.tooLarge, 'too much data before authorization')
        return
      }
      buffered.push(data)
    }
    ws.on('message', buffer)
    const refuse = (code: number, reason: string) => {
      debug('refused "%s": %s', docName, reason)
      guard.close(code, reason)
    }

    let permission: CollabPermission
    // a rule that never answers must not hold the socket (and its buffer) forever
    let timer: NodeJS.Timeout | undefined
    try {
      permission = await Promise.race([
        this.authorize({ connection: context, request }, docName),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error('authorize timed out')),
            this.config.limits.authorizeTimeoutMs
          )
        }),
      ])
    } catch {
      return refuse(CLOSE_CODES.authorizationFailed, 'authorization failed, retry later')
    } finally {
      clearTimeout(timer)
    }
    if (!permission.canRead) {
      return refuse(CLOSE_CODES.forbidden, 'forbidden')
    }
    const engine = await this.#engineOf(docName)
    if (!engine) {
      return refuse(CLOSE_CODES.unsupportedEngine, 'this document is not served by this server')
    }
    if (ws.readyState !== 1 || guard.closed) {
      return
    }
    engine.handleConnection(ws, {
      id: String(++this.#connectionIds),
      docName,
      context,
      permission,
      request,
      buffered,
      stopBuffering: () => ws.off('message', buffer),
    })
  }

  /**
   * Persists every open document now.
   */
  async flush() {
    await Promise.all([...this.#engines.values()].map((engine) => engine.flushAll()))
  }

  /**
   * Flushes every document, closes every socket and stops listening.
   */
  async close() {
    if (this.#closed) {
      return
    }
    this.#closed = true
    for (const [server, listener] of this.#servers) {
      server.off('upgrade', listener)
    }
    this.#servers.clear()
    // a document that could not be stored makes close() reject, after every
    // socket, the presence roster and the storage are closed all the same
    const results = await Promise.allSettled(
      [...this.#engines.values()].map((engine) => engine.close())
    )
    for (const ws of this.#wss?.clients ?? []) {
      // 1001 "going away" tells clients to reconnect, to another instance if there is one
      ws.close(1001, 'Server is shutting down')
      setTimeout(() => ws.terminate(), 1000).unref()
    }
    this.#wss?.close()
    await this.presence?.close()
    await this.config.storage.close?.()
    const failed = results.find((result) => result.status === 'rejected')
    if (failed) {
      throw failed.reason
    }
  }
}
