import type * as Y from 'yjs'
import {
  AutomergeAwareness,
  type AutomergePresenceClass,
  type AutomergePresenceOptions,
} from './automerge_presence.ts'
import { defaultTransportFactory } from './transports.ts'
import { absoluteWsUrl } from './yjs_transport.ts'
import type {
  CollabStatus,
  CollabTokenInfo,
  CollabTransport,
  TransportContext,
  TransportFactory,
} from './types.ts'

/** What the transport uses of automerge-repo's WebSocket client adapter */
export interface AutomergeNetworkAdapterLike {
  url: string
  socket?: { readyState: number; close(): void }
  peerId?: unknown
  peerMetadata?: unknown
  connect(peerId: unknown, peerMetadata?: unknown): void
  on(event: 'peer-candidate' | 'peer-disconnected', listener: (...args: any[]) => void): unknown
  off(event: 'peer-candidate' | 'peer-disconnected', listener: (...args: any[]) => void): unknown
}

/** What the transport uses of automerge-repo's `Repo` */
export interface AutomergeRepoLike {
  find(id: any): Promise<any>
  shutdown(): Promise<void>
}

/**
 * The automerge-repo classes, passed by the app so that apps without
 * Automerge never bundle it:
 * `createAutomergeTransport({ Repo, BrowserWebSocketClientAdapter })`.
 */
export interface AutomergeModules {
  Repo: new (options: { network: any[]; storage?: any }) => AutomergeRepoLike
  BrowserWebSocketClientAdapter: new (url: string, retryInterval?: number) => any
  /** automerge-repo's `Presence`: with it, `useAwareness` works on Automerge documents */
  Presence?: AutomergePresenceClass
}

export interface AutomergeTransportOptions {
  /** An automerge-repo storage adapter (IndexedDB) to keep documents across reloads */
  storage?: unknown
  /** Wait between two reconnection attempts, in ms (automerge-repo retries at a fixed pace) */
  retryIntervalMs?: number
  /** Heartbeat and time to live of presence (with `modules.Presence`) */
  presence?: AutomergePresenceOptions
}

/** The socket URL of a token: its `wsUrl` with the token in the query */
function socketUrl(info: CollabTokenInfo, baseUrl?: string): string {
  const url = new URL(absoluteWsUrl(info.wsUrl, baseUrl))
  url.searchParams.set('token', info.token)
  return url.href
}

/**
 * An Automerge document through an unmodified automerge-repo `Repo` and its
 * browser WebSocket adapter, on the document's socket. `doc` is the
 * `DocHandle`. Connected means the server peer is announced; as the spec
 * says for transports other than Yjs, `synced` is "connected". Changes
 * made while disconnected stay in the handle and sync on reconnect.
 */
export class AutomergeCollabTransport implements CollabTransport {
  readonly repo: AutomergeRepoLike
  readonly adapter: AutomergeNetworkAdapterLike
  doc: unknown = null
  /** Presence, when the app passed automerge-repo's `Presence` */
  awareness?: AutomergeAwareness
  error: Error | null = null
  #status: CollabStatus = 'connecting'
  #listeners = new Set<() => void>()
  #cleanup: (() => void)[] = []
  #destroyed = false

  private constructor(
    modules: AutomergeModules,
    info: CollabTokenInfo,
    context: TransportContext,
    options: AutomergeTransportOptions
  ) {
    this.adapter = new modules.BrowserWebSocketClientAdapter(
      socketUrl(info, context.config.baseUrl),
      options.retryIntervalMs ?? 1000
    )
    this.repo = new modules.Repo({
      network: [this.adapter],
      ...(options.storage ? { storage: options.storage } : {}),
    })
    const connected = () => this.#set('connected')
    const disconnected = () => this.#set('disconnected')
    this.adapter.on('peer-candidate', connected)
    this.adapter.on('peer-disconnected', disconnected)
    this.#cleanup.push(
      () => this.adapter.off('peer-candidate', connected),
      () => this.adapter.off('peer-disconnected', disconnected),
      // the adapter reads its url on every reconnect: keep the token fresh in it
      context.tokens.onToken((next) => {
        this.adapter.url = socketUrl(next, context.config.baseUrl)
      })
    )
    this.#followNetwork()
  }

  /**
   * The browser knows it went offline before the socket does: close the
   * socket now (automerge-repo's adapter then retries at its pace), and
   * connect again as soon as the browser is back online.
   */
  #followNetwork() {
    const target = globalThis as any
    if (typeof target.addEventListener !== 'function') return
    const offline = () => this.adapter.socket?.close()
    const online = () => {
      const { socket, peerId, peerMetadata } = this.adapter
      // 0 connecting, 1 open: a socket on its way needs no second one
      if (!this.#destroyed && peerId && (!socket || socket.readyState > 1)) {
        this.adapter.connect(peerId, peerMetadata)
      }
    }
    target.addEventListener('offline', offline)
    target.addEventListener('online', online)
    this.#cleanup.push(() => {
      target.removeEventListener('offline', offline)
      target.removeEventListener('online', online)
    })
  }

  /** Opens the repo on the token's socket and waits for the document */
  static async open(
    modules: AutomergeModules,
    info: CollabTokenInfo,
    docName: string,
    context: TransportContext,
    options: AutomergeTransportOptions = {}
  ): Promise<AutomergeCollabTransport> {
    const documentId = (info as CollabTokenInfo & { documentId?: string }).documentId
    if (!documentId) {
      throw new Error(`The token of "${docName}" names no Automerge document (documentId)`)
    }
    const transport = new AutomergeCollabTransport(modules, info, context, options)
    try {
      transport.doc = await transport.repo.find(documentId)
      if (modules.Presence) {
        transport.awareness = new AutomergeAwareness(
          modules.Presence,
          transport.doc,
          options.presence
        )
      }
    } catch (error) {
      transport.destroy()
      throw error
    }
    return transport
  }

  getStatus(): CollabStatus {
    return this.#status
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  destroy() {
    if (this.#destroyed) return
    this.#destroyed = true
    for (const cleanup of this.#cleanup) cleanup()
    this.awareness?.destroy()
    this.repo.shutdown().catch(() => {})
    this.#set('disconnected')
    this.#listeners.clear()
  }

  #set(status: CollabStatus) {
    if (this.#status === status) return
    this.#status = status
    for (const listener of this.#listeners) listener()
  }
}

/**
 * A transport factory that opens Automerge documents with the given
 * automerge-repo classes and every other engine as `defaultTransportFactory`
 * does. Pass it as the provider's `createTransport`.
 */
export function createAutomergeTransport(
  modules: AutomergeModules,
  options: AutomergeTransportOptions = {}
): TransportFactory {
  return (info: CollabTokenInfo, doc: Y.Doc, docName: string, context: TransportContext) =>
    info.engine === 'automerge'
      ? AutomergeCollabTransport.open(modules, info, docName, context, options)
      : defaultTransportFactory(info, doc, docName, context)
}
