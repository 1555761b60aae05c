import { randomBytes } from 'node:crypto'
import * as A from '@automerge/automerge'
import { Repo, type DocHandle, type DocumentId, type PeerId } from '@automerge/automerge-repo'
import type { WebSocket } from 'ws'
import debug from '../../debug.ts'
import { reportCollaborationError } from '../../observability.ts'
import { CLOSE_CODES } from '../../server/close_codes.ts'
import { guardOf } from '../../server/connection.ts'
import type { LiveDocumentResult } from '../../types.ts'
import type { CollabEngine, CollabEngineHost, CollabSession } from '../engine.ts'
import { AutomergeClusterAdapter } from './cluster_adapter.ts'
import {
  concatChunks,
  diffDocs,
  mergeChunks,
  docFromState,
  genesisState,
  restoreInto,
  textOfDoc,
  withFree,
  withoutChanges,
} from './content.ts'
import { automergeDocumentId } from './document_id.ts'
import { initialState } from './initial_state.ts'
import { AtriumNetworkAdapter, type AutomergePeer } from './network_adapter.ts'
import { DocumentSizeBound } from '../size_bound.ts'
import { CollaborationStorageAdapter } from './storage_adapter.ts'

/** Longer than automerge-repo's sync throttle (100 ms) */
const SYNC_SETTLE_MS = 250
/** Longest an unloading document waits for the other instances to confirm its changes */
const CLUSTER_SETTLE_MS = 2000

/** One document open in the server's repo */
interface OpenDocument {
  name: string
  documentId: DocumentId
  handle: DocHandle<any>
  connections: number
  /** Holders other than sockets (manager operations) keeping it loaded */
  holds: number
  unloading?: Promise<void>
  /** Size when last measured plus the sync bytes writers sent since */
  size: DocumentSizeBound
}

/**
 * The Automerge engine: documents served over the automerge-repo WebSocket
 * protocol by one automerge-repo `Repo` inside the app, stored through the
 * collaboration storage. A socket opens one document (the one its token
 * names); its id is `automergeDocumentId(name)`.
 */
export class AutomergeEngine implements CollabEngine {
  readonly name = 'automerge' as const
  readonly repo: Repo
  #host: CollabEngineHost
  #network: AtriumNetworkAdapter
  #storage: CollaborationStorageAdapter
  /** The other app instances (multiInstance) */
  #cluster?: AutomergeClusterAdapter
  #loading = new Map<string, Promise<OpenDocument>>()
  #open = new Map<string, OpenDocument>()
  #byId = new Map<string, OpenDocument>()
  #closing = false

  constructor(host: CollabEngineHost) {
    this.#host = host
    this.#storage = new CollaborationStorageAdapter({
      storage: host.storage,
      debounce: host.debounce,
      maxWait: host.maxWait,
      // every instance stores what reaches it: a compaction keeps what another stored
      merge: host.cluster ? mergeChunks : undefined,
      stateOf: (documentId) => {
        const open = this.#byId.get(documentId)
        return open ? A.save(open.handle.doc()) : null
      },
    })
    this.#network = new AtriumNetworkAdapter(
      {
        readOnly: (documentId, data) => {
          const open = this.#byId.get(documentId)
          return open ? withoutChanges(open.handle.doc(), data) : null
        },
        fits: (documentId, bytes) => {
          const open = this.#byId.get(documentId)
          return open ? this.#fits(open, bytes) : true
        },
        left: (peer) => this.#left(peer),
        ephemeral: (documentId, message) => this.#cluster?.publishEphemeral(documentId, message),
      },
      {
        maxHeldBytes: host.limits.maxPayload + 64 * 1024,
        maxEphemeralBytes: host.limits.maxAwarenessStateBytes,
        // presence reaches other instances' clients under the socket's id: unique across instances
        peerPrefix: host.cluster
          ? `atrium-${host.cluster.instanceId.subarray(0, 6).toString('base64url')}-`
          : undefined,
      }
    )
    if (host.cluster) {
      this.#cluster = new AutomergeClusterAdapter(host.cluster.instanceId, {
        relayEphemeral: (documentId, message) => this.#network.relayEphemeral(documentId, message),
        maxEphemeralBytes: host.limits.maxAwarenessStateBytes,
      })
    }
    const share = async (peerId: PeerId, documentId?: DocumentId) =>
      this.#network.mayShare(peerId, documentId)
    this.repo = new Repo({
      // in every message the server sends: 72 random bits keep instances apart in
      // 19 characters (sockets are `atrium-<n>`); a UUID cost 36 bytes a message
      peerId: `server-${randomBytes(9).toString('base64url')}` as PeerId,
      // the other instances are not peers of the repo: the cluster adapter syncs them itself
      network: [this.#network],
      storage: this.#storage,
      // changes reach the storage's update log within this interval (the 250 ms promise)
      saveDebounceRate: host.appendInterval,
      shareConfig: { announce: share, access: share },
    })
  }

  async #load(docName: string): Promise<OpenDocument> {
    // subscribed before the load, so no other instance's change falls between
    const link = await this.#host.cluster?.open(docName)
    try {
      const open = await this.#loadStored(docName)
      if (link) {
        this.#cluster!.attach(open.documentId, link, open.handle)
      }
      return open
    } catch (error) {
      await link?.close()
      throw error
    }
  }

  async #loadStored(docName: string): Promise<OpenDocument> {
    const documentId = automergeDocumentId(docName) as DocumentId
    this.#storage.register(documentId, docName)
    const stored = await this.#host.storage.loadDocument(docName)
    const state = stored
      ? concatChunks([stored.state, ...(stored.updates ?? [])])
      : await initialState(this.#host, docName)
    // one storage read: the repo's first save is then a snapshot, which
    // compacts the update log it did not read
    const handle = this.repo.import<any>(state, { docId: documentId })
    handle.doneLoading()
    const open: OpenDocument = {
      name: docName,
      documentId,
      handle,
      connections: 0,
      holds: 0,
      size: new DocumentSizeBound(state.byteLength),
    }
    this.#open.set(docName, open)
    this.#byId.set(documentId, open)
    debug('loaded automerge document "%s" as %s', docName, documentId)
    return open
  }

  /**
   * False when a sync message of `bytes` could take the document past
   * `limits.maxDocumentBytes` (a sync message carries at most the changes it
   * adds, so its size bounds the growth).
   */
  #fits(open: OpenDocument, bytes: number) {
    const max = this.#host.limits.maxDocumentBytes
    if (!open.size.fits(bytes, max, () => A.save(open.handle.doc()).byteLength)) {
      return false
    }
    open.size.grew(bytes)
    return true
  }

  /** The open document, loading it once however many callers ask at once */
  async acquire(docName: string): Promise<OpenDocument> {
    for (;;) {
      let pending = this.#loading.get(docName)
      if (!pending) {
        pending = this.#load(docName)
        this.#loading.set(docName, pending)
        pending.catch(() => this.#loading.delete(docName))
      }
      const open = await pending
      if (!open.unloading) {
        return open
      }
      await open.unloading
    }
  }

  /** Unloads a document nobody uses any more, after its final save */
  #release(open: OpenDocument) {
    if (open.connections > 0 || open.holds > 0 || open.unloading || this.#closing) {
      return
    }
    open.unloading = (async () => {
      try {
        await this.repo.flush([open.documentId])
        await this.#storage.flush([open.documentId])
      } catch {
        // reported by the storage adapter; kept loaded, retried with backoff
        open.unloading = undefined
        return
      }
      // automerge-repo sends a change to peers up to 100 ms after it is made;
      // a sync still pending would wait forever for an unloaded document
      await new Promise((resolve) => setTimeout(resolve, SYNC_SETTLE_MS))
      // a change made here just before must reach the instances still serving it
      await this.#cluster?.caughtUp(
        open.documentId,
        () => A.getHeads(open.handle.doc()),
        CLUSTER_SETTLE_MS
      )
      if (open.connections > 0 || open.holds > 0 || this.#closing) {
        open.unloading = undefined
        return
      }
      await this.#cluster?.detach(open.documentId)
      await this.repo.removeFromCache(open.documentId)
      this.#loading.delete(open.name)
      this.#open.delete(open.name)
      this.#byId.delete(open.documentId)
      this.#storage.unregister(open.documentId)
      debug('unloaded automerge document "%s"', open.name)
    })()
  }

  async #withDocument<T>(docName: string, run: (open: OpenDocument) => T | Promise<T>) {
    const open = await this.acquire(docName)
    open.holds++
    try {
      return await run(open)
    } finally {
      open.holds--
      this.#release(open)
    }
  }

  #left(peer: AutomergePeer) {
    if (!peer.opened) {
      return
    }
    const open = this.#byId.get(peer.documentId)
    this.#host.onLeave(peer.session)
    if (open) {
      open.connections--
      this.#release(open)
    }
  }

  handleConnection(socket: WebSocket, session: CollabSession) {
    const peer = this.#network.accept(socket, session, automergeDocumentId(session.docName))
    this.acquire(session.docName).then(
      (open) => {
        if (socket.readyState !== 1 || guardOf(socket).closed) {
          this.#release(open)
          return
        }
        open.connections++
        this.#host.onJoin(session)
        this.#network.open(peer)
      },
      (error) => {
        reportCollaborationError({
          scope: 'storage',
          operation: 'loadDocument',
          docName: session.docName,
          error,
        })
        guardOf(socket).close(CLOSE_CODES.internalError, 'document could not be loaded')
      }
    )
  }

  hasLiveDocument(docName: string) {
    return this.#open.has(docName)
  }

  /** Runs with the live `DocHandle` (change it with `handle.change(...)`) */
  async withLiveDocument<T>(
    docName: string,
    run: (handle: DocHandle<any>) => T | Promise<T>
  ): Promise<LiveDocumentResult<T>> {
    const open = this.#open.get(docName)
    if (!open || open.unloading) {
      return { live: false, reason: 'not-loaded' }
    }
    open.holds++
    try {
      return { live: true, value: await run(open.handle) }
    } finally {
      open.holds--
      this.#release(open)
    }
  }

  async getDocumentState(docName: string): Promise<Uint8Array> {
    const open = this.#open.get(docName)
    if (open) {
      return A.save(open.handle.doc())
    }
    const stored = await this.#host.storage.loadDocument(docName)
    if (!stored) {
      return genesisState(docName)
    }
    return withFree(docFromState(concatChunks([stored.state, ...(stored.updates ?? [])])), A.save)
  }

  textOf(state: Uint8Array) {
    return withFree(docFromState(state), textOfDoc)
  }

  async #persist(open: OpenDocument) {
    await this.repo.flush([open.documentId])
    await this.#storage.flush([open.documentId])
  }

  async applyState(docName: string, state: Uint8Array) {
    // parsed alone first: the handle swallows a throw inside its update
    withFree(docFromState(state), () => {})
    await this.#withDocument(docName, async (open) => {
      open.handle.update((doc: A.Doc<any>) => A.loadIncremental(doc, state))
      await this.#persist(open)
    })
  }

  async replaceContent(docName: string, state: Uint8Array) {
    const target = withFree(docFromState(state), (doc) => A.toJS(doc) as Record<string, unknown>)
    await this.#withDocument(docName, async (open) => {
      open.handle.change((doc: Record<string, any>) => restoreInto(doc, target), {
        message: 'restore',
      })
      await this.#persist(open)
    })
  }

  /**
   * A version of an Automerge document is a point of its history: an empty
   * change on every current head, so the version has exactly one head, its
   * id. The snapshot is the document at that head.
   */
  async versionPoint(docName: string) {
    return this.#withDocument(docName, async (open) => {
      open.handle.update((doc: A.Doc<any>) => A.emptyChange(doc, { message: 'version' }))
      const doc = open.handle.doc()
      await this.#persist(open)
      return { id: A.getHeads(doc)[0], state: A.save(doc) }
    })
  }

  diff(a: Uint8Array, b: Uint8Array) {
    return diffDocs(a, b)
  }

  openDocuments() {
    return [...this.#open.keys()]
  }

  /** Sockets open on a document */
  connectionCount(docName: string) {
    return this.#open.get(docName)?.connections ?? 0
  }

  async flushAll() {
    const ids = [...this.#open.values()].map((open) => open.documentId)
    await this.repo.flush(ids)
    await this.#storage.flush(ids)
  }

  async close() {
    this.#closing = true
    let failure: unknown
    try {
      await this.flushAll()
    } catch (error) {
      failure = error
    }
    this.#network.disconnect()
    this.#cluster?.disconnect()
    this.#storage.close()
    this.#open.clear()
    this.#byId.clear()
    this.#loading.clear()
    if (failure) {
      throw failure
    }
  }
}
