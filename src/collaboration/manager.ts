import type { Server } from 'node:http'
import type { WebSocketServer } from 'ws'
import type { HttpContext } from '@adonisjs/core/http'
import { publishDiagnostic } from '../shared/diagnostics.ts'
import { engineOf, findDocumentDeclaration } from './define_config.ts'
import { issueCollaborationToken, type IssueTokenInput } from './issue.ts'
import { CollabConfigError } from './errors.ts'
import { warnCollaboration } from './observability.ts'
import { authorizeDocument, hasAuthorizeRule } from './authorization.ts'
import type { PresenceRoster } from './presence.ts'
import type { DocumentCluster } from './cluster/redis_cluster.ts'
import { UpgradeHandler } from './server/upgrade_handler.ts'
import { CollabComments } from './comments.ts'
import { CollabVersions } from './versions.ts'
import { assertCanPushToRoom, isHostedEngine, pushStateToRoom } from './hosted_room.ts'
import type { CollabEngine, CollabEngineHost, CollabSession } from './engines/engine.ts'
import type {
  CollabAuthorizeContext,
  CollabEngineName,
  CollaborationConfig,
  ListPageOptions,
  LiveDocumentResult,
  PresenceMember,
} from './types.ts'

/**
 * True when the config names Automerge (default engine or a pattern's):
 * its engine is then built at boot; an `engineFor` choosing it at run time
 * builds it on first use.
 */
function usesAutomerge(config: CollaborationConfig) {
  return (
    config.engine === 'automerge' ||
    Object.values(config.documents).some(
      (declaration) => engineOf(declaration?.engine) === 'automerge'
    )
  )
}

export { CLOSE_CODES } from './server/close_codes.ts'

/**
 * The collaboration server: routes WebSocket upgrades to engines after
 * checking tokens and authorization, and exposes documents, versions,
 * comments and presence to app code.
 */
export class CollaborationManager {
  readonly config: CollaborationConfig
  readonly comments: CollabComments
  /** Named versions: snapshot, list, restore, diff, prune */
  readonly versions: CollabVersions
  readonly presence?: PresenceRoster
  #engines = new Map<CollabEngineName, CollabEngine>()
  #engineHost?: CollabEngineHost
  #automerge?: Promise<CollabEngine>
  #upgrades?: UpgradeHandler
  #closed = false
  #cluster?: DocumentCluster

  constructor(
    config: CollaborationConfig,
    options: {
      engines?: CollabEngine[]
      presence?: PresenceRoster
      cluster?: DocumentCluster
      wss?: WebSocketServer
    } = {}
  ) {
    this.config = config
    this.comments = new CollabComments(this)
    this.versions = new CollabVersions(config.storage, (docName) => this.#requireEngine(docName))
    this.presence = options.presence
    this.#cluster = options.cluster
    if (options.wss) {
      this.#upgrades = new UpgradeHandler(options.wss, {
        config,
        authorize: (context, docName) => this.authorize(context, docName),
        engineOf: (docName) => this.#engineOf(docName),
      })
    }
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
    let cluster: DocumentCluster | undefined
    if (config.multiInstance) {
      const { DocumentCluster: Cluster } = await import('./cluster/redis_cluster.ts')
      cluster = config.redisClient
        ? new Cluster(config.redisClient, config.redisPrefix)
        : await Cluster.connect(config.redisUrl!, config.redisPrefix)
    }
    const manager: CollaborationManager = new CollaborationManager(config, {
      presence,
      cluster,
      wss: new WebSocketServer({
        noServer: true,
        maxPayload: config.limits.maxPayload,
        perMessageDeflate: false,
      }),
    })
    manager.#engineHost = {
      storage: config.storage,
      debounce: config.debounce,
      maxWait: config.maxWait,
      appendInterval: config.appendInterval,
      limits: config.limits,
      cluster,
      seed: (docName) => manager.#seed(docName),
      onJoin: (session) => manager.#onJoin(session),
      onLeave: (session) => manager.#onLeave(session),
    }
    manager.#engines.set('yjs', new YjsEngine(manager.#engineHost))
    if (usesAutomerge(config)) {
      await manager.#automergeEngine()
    }
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
    publishDiagnostic('collaboration', 'connection.opened', {
      docName: session.docName,
      connectionId: session.id,
      userId: session.context.userId,
      canWrite: session.permission.canWrite,
    })
    this.presence
      ?.join(session.docName, session.id, {
        userId: session.context.userId,
        name: session.context.user?.name ?? null,
        avatarUrl: session.context.user?.avatarUrl ?? null,
      })
      .catch(() => {})
  }

  #onLeave(session: CollabSession) {
    publishDiagnostic('collaboration', 'connection.closed', {
      docName: session.docName,
      connectionId: session.id,
      userId: session.context.userId,
    })
    this.presence?.leave(session.docName, session.id).catch(() => {})
  }

  /**
   * The permission of `ctx` on `docName`: the first matching pattern's rule,
   * then the global rule, else deny. A throwing rule is reported and raised
   * as the retryable `CollabAuthorizationError`.
   */
  authorize(ctx: HttpContext | CollabAuthorizeContext, docName: string) {
    return authorizeDocument(this.config, ctx, docName)
  }

  /**
   * True when some rule (pattern or global) could grant access to the document.
   */
  hasAuthorizeRule(docName: string) {
    return hasAuthorizeRule(this.config, docName)
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
    const name = await this.engineFor({ docName })
    const engine = this.#engines.get(name)
    if (!engine && name === 'automerge' && this.#engineHost && !this.#closed) {
      // an engineFor that picks Automerge at run time: loaded on first use
      return this.#automergeEngine()
    }
    return engine ?? null
  }

  /** The Automerge engine, built once (its packages are optional peers) */
  #automergeEngine() {
    this.#automerge ??= (async () => {
      const { createAutomergeEngine } = await import('./engines/automerge/create.ts')
      const engine = await createAutomergeEngine(this.#engineHost!)
      this.#engines.set('automerge', engine)
      return engine
    })()
    return this.#automerge
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

  getVersionState({ docName, versionId }: { docName: string; versionId: string }) {
    return this.versions.state(docName, versionId)
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
    return this.versions.create(
      docName,
      createdBy === null ? null : String(createdBy),
      label ?? null
    )
  }

  listVersions({ docName, page }: { docName: string; page?: ListPageOptions }) {
    return this.versions.list(docName, page)
  }

  /**
   * Snapshots the current state as `restored from #<seq>`, then writes the
   * version's content into the live document as new changes (for a hosted
   * document: into the stored one, then pushed to its room).
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
    const hosted = isHostedEngine(await this.engineFor({ docName }))
    if (hosted) assertCanPushToRoom(this.config)
    await this.versions.restore(docName, versionId, restoredBy === null ? null : String(restoredBy))
    if (hosted)
      await pushStateToRoom(this.config, docName, await this.getDocumentState({ docName }))
  }

  diffVersions({ docName, aId, bId }: { docName: string; aId: string; bId: string }) {
    return this.versions.diff(docName, aId, bId)
  }

  pruneVersions(options: { keep: number; docName?: string; dryRun?: boolean }) {
    return this.versions.prune(options)
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
    this.#upgrades?.attach(server)
  }

  /**
   * Persists every open document now.
   */
  async flush() {
    await Promise.all([...this.#engines.values()].map((engine) => engine.flushAll()))
  }

  /** True once close() has begun: no document, token or socket is served after it */
  get isClosed() {
    return this.#closed
  }

  /**
   * Flushes every document, closes every socket and refuses new ones.
   */
  async close() {
    if (this.#closed) {
      return
    }
    this.#closed = true
    this.#upgrades?.stopAccepting()
    // a document that could not be stored makes close() reject, after every
    // socket, the presence roster and the storage are closed all the same
    const results = await Promise.allSettled(
      [...this.#engines.values()].map((engine) => engine.close())
    )
    this.#upgrades?.closeSockets()
    await this.presence?.close()
    await this.#cluster?.close()
    await this.config.storage.close?.()
    const failed = results.find((result) => result.status === 'rejected')
    if (failed) {
      throw failed.reason
    }
  }
}
