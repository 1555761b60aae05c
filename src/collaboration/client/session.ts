import * as Y from 'yjs'
import { CollabDoc } from './collab_doc.ts'
import { CollabRestError } from './rest.ts'
import { TokenSource } from './token_source.ts'
import { defaultTransportFactory } from './transports.ts'
import type {
  CollabClientConfig,
  CollabEngineName,
  CollabStatus,
  CollabTokenInfo,
  CollabTransport,
  DocSessionSnapshot,
} from './types.ts'

export interface DocSessionOptions {
  /** A token for the first connection (as an `initialTokens` entry) */
  token?: CollabTokenInfo
  /** A document to sync instead of a new one */
  doc?: Y.Doc
  /** Called by `destroy()`, so a cache can evict the session */
  onDestroy?: (session: DocSession) => void
}

/** Statuses after which the token endpoint is not asked again on its own */
const FINAL_TOKEN_STATUSES = new Set([400, 401, 403, 404])

/**
 * One document kept in sync with the server. `start()` (idempotent) gets a
 * token and opens the transport; `retain()` holds the session open and
 * returns its own release; the last release stops it. `stop()` closes the
 * transport and keeps the document; `destroy()` is terminal.
 */
export class DocSession {
  readonly docName: string
  readonly doc: Y.Doc
  readonly collabDoc: CollabDoc
  readonly tokens: TokenSource
  transport: CollabTransport | null = null
  engine: CollabEngineName | null = null
  error: Error | null = null
  refCount = 0
  isDestroyed = false
  #config: CollabClientConfig
  #options: DocSessionOptions
  // a session exists to connect: until start() it reports the connection it is about to open
  #status: CollabStatus = 'connecting'
  #snapshot: DocSessionSnapshot
  #listeners = new Set<() => void>()
  #running = false
  /** Bumped by stop(), so a start still awaiting its token gives up */
  #generation = 0
  #retry: ReturnType<typeof setTimeout> | undefined
  #failures = 0
  #unsubscribeTransport: (() => void) | undefined

  constructor(docName: string, config: CollabClientConfig = {}, options: DocSessionOptions = {}) {
    this.docName = docName
    this.#config = config
    this.#options = options
    this.doc = options.doc ?? new Y.Doc()
    this.collabDoc = new CollabDoc(this.doc)
    this.tokens = new TokenSource(docName, config, options.token)
    this.#snapshot = this.#makeSnapshot()
  }

  /** True once the server's initial state is applied on the current connection */
  get synced(): boolean {
    const transport = this.transport
    if (!transport || this.#status === 'error') return false
    return transport.isSynced ? transport.isSynced() : transport.getStatus() === 'connected'
  }

  getStatus(): CollabStatus {
    return this.#status
  }

  /** The current state; the same object until something changes (for `useSyncExternalStore`) */
  getSnapshot(): DocSessionSnapshot {
    return this.#snapshot
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Connects; calling it again while running does nothing */
  start() {
    if (this.isDestroyed) throw new Error(`The session of "${this.docName}" is destroyed`)
    if (this.#running) return
    this.#running = true
    this.#connect(this.#generation)
  }

  /** Holds the session open; the returned function releases this hold (once) */
  retain(): () => void {
    this.refCount++
    this.start()
    let released = false
    return () => {
      if (released) return
      released = true
      this.release()
    }
  }

  /** Drops one hold; the last one stops the session */
  release() {
    if (this.refCount === 0) return
    this.refCount--
    if (this.refCount === 0) this.stop()
  }

  /** Closes the transport; the document and its content stay */
  stop() {
    this.#running = false
    this.#generation++
    clearTimeout(this.#retry)
    this.tokens.stop()
    this.#unsubscribeTransport?.()
    this.#unsubscribeTransport = undefined
    this.transport?.destroy()
    this.transport = null
    this.#setStatus('disconnected')
  }

  /** Stops, destroys the document and evicts the session: terminal */
  destroy() {
    if (this.isDestroyed) return
    this.stop()
    this.isDestroyed = true
    this.refCount = 0
    this.doc.destroy()
    this.#options.onDestroy?.(this)
    this.#emit()
    this.#listeners.clear()
  }

  async #connect(generation: number) {
    this.#setStatus('connecting')
    let info: CollabTokenInfo
    try {
      info = await this.tokens.get()
      if (generation !== this.#generation) return
      this.engine = info.engine ?? 'yjs'
      const factory = this.#config.createTransport ?? defaultTransportFactory
      const transport = await factory(info, this.doc, this.docName, {
        config: this.#config,
        tokens: this.tokens,
      })
      if (generation !== this.#generation) {
        transport.destroy()
        return
      }
      this.transport = transport
      this.#failures = 0
      this.error = null
      this.#unsubscribeTransport = transport.subscribe(() => this.#fromTransport())
      this.#fromTransport()
    } catch (error) {
      if (generation !== this.#generation) return
      this.error = error as Error
      if (error instanceof CollabRestError && FINAL_TOKEN_STATUSES.has(error.status)) {
        this.#setStatus('error')
        return
      }
      // the endpoint or the network failed: try again, backing off
      this.#setStatus('disconnected')
      this.#failures++
      const wait = Math.min(this.#config.maxBackoffMs ?? 10_000, 250 * 2 ** this.#failures)
      this.#retry = setTimeout(() => this.#connect(generation), wait)
    }
  }

  #fromTransport() {
    const transport = this.transport
    if (!transport) return
    if (transport.error) this.error = transport.error
    this.#status = transport.getStatus()
    this.#emit()
  }

  #setStatus(status: CollabStatus) {
    this.#status = status
    this.#emit()
  }

  #makeSnapshot(): DocSessionSnapshot {
    return {
      status: this.#status,
      synced: this.synced,
      error: this.error,
      engine: this.engine,
      transport: this.transport,
    }
  }

  #emit() {
    const next = this.#makeSnapshot()
    const previous = this.#snapshot
    if (
      previous.status === next.status &&
      previous.synced === next.synced &&
      previous.error === next.error &&
      previous.engine === next.engine &&
      previous.transport === next.transport
    ) {
      return
    }
    this.#snapshot = next
    for (const listener of this.#listeners) listener()
  }
}
