import type { IncomingMessage, Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { WebSocket, WebSocketServer } from 'ws'
import debug from '../debug.ts'
import { CollabTokenSecretMissingError } from '../errors.ts'
import { reportCollaborationError } from '../observability.ts'
import { resolveTokenSecret, verifyCollabToken } from '../tokens.ts'
import type { CollabEngine } from '../engines/engine.ts'
import type {
  CollabAuthorizeContext,
  CollabConnectionContext,
  CollabPermission,
  CollaborationConfig,
} from '../types.ts'
import { CLOSE_CODES } from './close_codes.ts'
import { SocketGuard, UserBudgets, refuseUpgrade } from './connection.ts'

/**
 * What the upgrade path needs of the manager: its config, its authorization
 * rule and the engine serving a document.
 */
export interface UpgradeTarget {
  config: CollaborationConfig
  authorize(context: CollabAuthorizeContext, docName: string): Promise<CollabPermission>
  engineOf(docName: string): Promise<CollabEngine | null>
}

/**
 * The WebSocket entry of collaboration: refuses what it does not serve over
 * HTTP (bad path, bad token) before any upgrade, then hands an authorized
 * socket, guarded from its first byte, to the document's engine.
 */
export class UpgradeHandler {
  /** The upgrade listener added to each attached server */
  #servers = new Map<Server, (request: IncomingMessage, socket: Duplex, head: Buffer) => void>()
  #wss: WebSocketServer
  #target: UpgradeTarget
  #connectionIds = 0
  #closing = false
  #budgets: UserBudgets

  constructor(wss: WebSocketServer, target: UpgradeTarget) {
    this.#wss = wss
    this.#target = target
    this.#budgets = new UserBudgets(target.config.limits)
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
    debug('listening for upgrades under %s', this.#target.config.path)
  }

  /**
   * The document an upgrade URL names: a string, `invalid` for a malformed
   * name under the collaboration path, `null` for another path.
   */
  #docNameOf(url: string): string | null | 'invalid' {
    const pathname = url.split('?')[0]
    const prefix = this.#target.config.path === '/' ? '/' : `${this.#target.config.path}/`
    if (!pathname.startsWith(prefix)) {
      return pathname === this.#target.config.path ? 'invalid' : null
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
        `Expected ${this.#target.config.path}/<document name> with non-empty, URL-encoded segments`
      )
    }
    if (this.#closing) {
      return refuseUpgrade(socket, 503, 'E_COLLAB_SHUTTING_DOWN', 'The server is shutting down')
    }
    // the token is checked before the upgrade: an unauthenticated client never
    // gets a WebSocket, so it never reaches the frame parser
    const token = new URL(request.url ?? '/', 'http://localhost').searchParams.get('token')
    let payload
    try {
      payload = verifyCollabToken(
        token,
        resolveTokenSecret(this.#target.config.tokenSecret),
        docName
      )
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
    // a user just closed for breaking a limit is refused before any frame:
    // reconnecting must not buy another flood (or another 10 MB message)
    const cooldown = this.#budgets.cooldownLeft(payload.userId)
    if (cooldown > 0) {
      return refuseUpgrade(
        socket,
        429,
        'E_COLLAB_RATE_LIMITED',
        `This user broke a collaboration limit; retry in ${Math.ceil(cooldown / 1000)} s`
      )
    }
    const context = payload.user
      ? { userId: payload.userId, user: payload.user }
      : { userId: payload.userId }
    this.#wss.handleUpgrade(request, socket, head, (ws) => {
      // the guard attaches the error listener before anything else can fail
      const guard = new SocketGuard(
        ws,
        this.#target.config.limits,
        this.#budgets.for(context.userId),
        this.#penalizer(context.userId),
        socket
      )
      this.#accept(ws, guard, request, docName, context).catch((error) => {
        reportCollaborationError({ scope: 'authorize', operation: 'handshake', docName, error })
        guard.close(CLOSE_CODES.internalError, 'handshake failed')
      })
    })
  }

  /**
   * The guard's penalty for one user, made outside `handleUpgrade`'s scope: a
   * closure made there would keep the upgrade request (which that scope holds)
   * alive as long as the socket
   */
  #penalizer(userId: string) {
    return () => this.#budgets.penalize(userId)
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
    const maxBuffered = this.#target.config.limits.maxPayload + 64 * 1024
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
        this.#target.authorize({ connection: context, request }, docName),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error('authorize timed out')),
            this.#target.config.limits.authorizeTimeoutMs
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
    const engine = await this.#target.engineOf(docName)
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
   * Refuses every later upgrade with a 503 (`Connection: close`). The
   * listeners stay attached until the server closes: without one, Node.js 24
   * hands an upgrade to the app's router as a plain request.
   */
  stopAccepting() {
    this.#closing = true
  }

  /** Closes every open socket (1001), terminating those that do not answer within 1 s */
  closeSockets() {
    for (const ws of this.#wss.clients) {
      // 1001 "going away" tells clients to reconnect, to another instance if there is one
      ws.close(1001, 'Server is shutting down')
      setTimeout(() => ws.terminate(), 1000).unref()
    }
    this.#wss.close()
  }
}
