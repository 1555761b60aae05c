import type * as Y from 'yjs'
import { WebsocketProvider } from 'y-websocket'
import type { Awareness } from 'y-protocols/awareness'
import { CollabRestError } from './rest.ts'
import type { CollabStatus, CollabTokenInfo, CollabTransport, TransportContext } from './types.ts'

/**
 * Close codes after which reconnecting cannot help: denied (4003), a
 * message or document the server cannot take (4400, 4413). Every other
 * close (1001 shutdown, 4503 authorize failed, 4429 rate limit, 4500, a
 * refused upgrade) is retried with backoff.
 */
const FINAL_CLOSE_CODES = new Set([4003, 4400, 4413])

/** Why a connection stopped for good */
export class CollabConnectionError extends Error {
  code: number
  constructor(code: number, reason: string) {
    super(
      code === 4003
        ? 'Access to this document was denied'
        : `The server closed the connection (${code}${reason ? `: ${reason}` : ''})`
    )
    this.name = 'CollabConnectionError'
    this.code = code
  }
}

/** Absolute `ws:`/`wss:` URL of a token's `wsUrl` (which may be a path) */
export function absoluteWsUrl(wsUrl: string, baseUrl?: string): string {
  if (/^wss?:\/\//.test(wsUrl)) return wsUrl
  const base = baseUrl ?? (globalThis as any).location?.href
  if (!base) {
    throw new Error('The token has a relative wsUrl: set "baseUrl" of the collaboration client')
  }
  return new URL(wsUrl, base).href.replace(/^http/, 'ws')
}

/**
 * Yjs over the y-websocket protocol (sync and awareness), the protocol the
 * app's collaboration path speaks; also what PartyKit and PartyServer rooms
 * speak. Reconnects with exponential backoff; edits made while offline stay
 * in the document and are exchanged by the sync handshake on reconnect.
 */
export class SelfHostedCollabTransport implements CollabTransport {
  readonly doc: Y.Doc
  readonly provider: WebsocketProvider
  error: Error | null = null
  #status: CollabStatus = 'connecting'
  #listeners = new Set<() => void>()
  #cleanup: (() => void)[] = []
  #destroyed = false
  /** True once the server's state is applied on the current connection */
  isSynced?: () => boolean

  constructor(
    info: CollabTokenInfo,
    doc: Y.Doc,
    _docName: string,
    context: TransportContext,
    options: { reportsSync?: boolean } = {}
  ) {
    this.doc = doc
    if (options.reportsSync !== false) {
      this.isSynced = () => this.provider.synced
    }
    const url = absoluteWsUrl(info.wsUrl, context.config.baseUrl)
    // y-websocket appends "/<room>": the last (already encoded) segment is the room
    const slash = url.lastIndexOf('/')
    const [path, search = ''] = url.slice(slash + 1).split('?')
    const params = Object.fromEntries(new URLSearchParams(search))
    this.provider = new WebsocketProvider(url.slice(0, slash), path, doc, {
      params: { ...params, token: info.token },
      disableBc: true,
      maxBackoffTime: context.config.maxBackoffMs ?? 10_000,
      shouldReconnect: (event) => !FINAL_CLOSE_CODES.has(event.code),
      ...(context.config.WebSocketImpl ? { WebSocketPolyfill: context.config.WebSocketImpl } : {}),
    })

    let opened = false
    /** True once a refused upgrade asked the endpoint for a token: cleared when a socket opens */
    let renewedThisOutage = false
    const onStatus = ({ status }: { status: 'connecting' | 'connected' | 'disconnected' }) => {
      if (this.#status === 'error') return
      if (status === 'connected') {
        opened = true
        renewedThisOutage = false
      }
      this.#set(status)
    }
    const onSync = () => this.#emit()
    const onClose = (event: CloseEvent | null) => {
      const refused = !opened
      opened = false
      if (!event || FINAL_CLOSE_CODES.has(event.code)) return
      // a refused upgrade (a 401 for an expired or revoked token) shows as a
      // close before open: renew the token once before the next attempt, which
      // the backoff spaces out; an endpoint that denies the document is final.
      // Once the endpoint has answered, later refusals in the same outage (a
      // server shutting down or restarting) only back off: asking for a token
      // on each would poll the app. An unreachable endpoint is asked again.
      if ((refused && !renewedThisOutage) || context.tokens.expired) {
        context.tokens.refresh().then(
          () => {
            if (refused) renewedThisOutage = true
          },
          (error) => {
            if (!(error instanceof CollabRestError)) return
            if (refused) renewedThisOutage = true
            if (error.status === 401 || error.status === 403) {
              this.error = error
              this.provider.disconnect()
              this.#set('error')
            }
          }
        )
      }
    }
    const onFinal = ({ code, reason }: { code: number; reason: string }) => {
      this.error = new CollabConnectionError(code, reason)
      this.#set('error')
    }
    this.provider.on('status', onStatus)
    this.provider.on('sync', onSync)
    this.provider.on('connection-close', onClose)
    this.provider.on('closed', onFinal)
    this.#cleanup.push(
      context.tokens.onToken((next) => {
        this.provider.params = { ...this.provider.params, token: next.token }
      })
    )

    // the browser knows it went offline before the socket does: disconnect
    // now, and reconnect (resetting the backoff) as soon as it is back
    const target = globalThis as any
    if (typeof target.addEventListener === 'function') {
      const offline = () => this.provider.disconnect()
      const online = () => {
        this.provider.wsUnsuccessfulReconnects = 0
        if (this.#status !== 'error') this.provider.connect()
      }
      target.addEventListener('offline', offline)
      target.addEventListener('online', online)
      this.#cleanup.push(() => {
        target.removeEventListener('offline', offline)
        target.removeEventListener('online', online)
      })
    }
  }

  get awareness(): Awareness {
    return this.provider.awareness
  }

  getStatus(): CollabStatus {
    return this.#status
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /**
   * Drops the connection now and opens a new one. The old socket is let go
   * at once rather than closed and waited for: a PartyServer room does not
   * answer a close without a status code, and the browser would hold the
   * socket (and the status) for its 30 s closing timeout.
   */
  reconnect() {
    if (this.#destroyed || this.#status === 'error') return
    this.provider.disconnect()
    this.provider.connect()
  }

  destroy() {
    if (this.#destroyed) return
    this.#destroyed = true
    for (const cleanup of this.#cleanup) cleanup()
    this.provider.destroy()
    this.#status = 'disconnected'
    this.#emit()
    this.#listeners.clear()
  }

  #set(status: CollabStatus) {
    if (this.#status === status) return
    this.#status = status
    this.#emit()
  }

  #emit() {
    for (const listener of this.#listeners) listener()
  }
}

/**
 * A PartyKit or PartyServer room (y-partykit / y-partyserver speak the same
 * protocol): the token's `wsUrl` names the room. Their `synced` is
 * "connected", as these rooms do not announce the end of the first sync.
 */
export class HostedCollabTransport extends SelfHostedCollabTransport {
  constructor(info: CollabTokenInfo, doc: Y.Doc, docName: string, context: TransportContext) {
    super(info, doc, docName, context, { reportsSync: false })
  }
}

/** PartyKit rooms (y-partykit) */
export const HostedACollabTransport = HostedCollabTransport
/** PartyServer rooms (y-partyserver) */
export const HostedBCollabTransport = HostedCollabTransport
