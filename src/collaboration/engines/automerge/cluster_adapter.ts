import * as A from '@automerge/automerge'
import { cbor, type DocHandle } from '@automerge/automerge-repo'
import {
  ClusterMessage,
  type ClusterLink,
  type ClusterLinkListener,
  type ClusterMessageKind,
} from '../../cluster/redis_cluster.ts'
import debug from '../../debug.ts'
import { reportCollaborationError } from '../../observability.ts'
import { isBytes, isId } from './protocol.ts'

/** Instances one document keeps as peers; past it, the one silent longest is dropped */
const MAX_PEERS_PER_DOCUMENT = 64
/** How often an unloading document checks that the other instances have its changes */
const CAUGHT_UP_POLL_MS = 25

export interface ClusterAdapterHooks {
  /** Another instance's client presence, for this instance's sockets on the document */
  relayEphemeral(documentId: string, message: Record<string, unknown>): void
  /** Largest presence payload a socket may send (`limits.maxAwarenessStateBytes`) */
  maxEphemeralBytes: number
}

/** Another instance that has the document open */
interface RemoteInstance {
  instance: Buffer
  /** Automerge's record of what was exchanged with it: what it has, what was sent */
  syncState: A.SyncState
  /** Heads its last sync message announced: what it has */
  heads: string[]
}

/** One open document's link to the other instances */
interface LinkedDocument {
  documentId: string
  link: ClusterLink
  handle: DocHandle<unknown>
  /** By instance id (hex), least recently heard first */
  remotes: Map<string, RemoteInstance>
  onHeadsChanged: () => void
  /** A send to the other instances is scheduled */
  pending?: NodeJS.Immediate
}

type Frame = Record<string, unknown>

/**
 * The other app instances with a document open (multiInstance), synced with
 * Automerge's sync protocol over the document's Redis channel, one sync state
 * per instance. The sync protocol, not the order of Redis messages, makes
 * instances converge: concurrent changes merge, and a message lost while
 * Redis was away is recovered by restarting both sides' sync (their heads and
 * bloom filters say what each lacks).
 *
 * The instances are not peers of the server's repo on purpose: automerge-repo
 * sends a document's changes to its peers at most every 100 ms (a throttle its
 * options do not expose), so a change relayed through the repo waited for it
 * on the instance that received it and again on the one relaying it to its
 * clients. Here a change goes to the other instances as soon as the handle's
 * heads move (batched per event loop turn), so it waits for that throttle only
 * once, like a change between two clients of one instance.
 *
 * Frames (CBOR, after the cluster's header naming the sender):
 * `hello` (this instance has the document open; `r` asks for a hello back),
 * `bye`, `sync` (`to` names its instance), presence (for all).
 */
export class AutomergeClusterAdapter {
  #documents = new Map<string, LinkedDocument>()
  #hooks: ClusterAdapterHooks

  constructor(
    readonly instanceId: Buffer,
    hooks: ClusterAdapterHooks
  ) {
    this.#hooks = hooks
  }

  /**
   * Starts sharing a loaded document: what the link received during the load
   * is read now, and the others are told this instance has it.
   */
  attach(documentId: string, link: ClusterLink, handle: DocHandle<unknown>) {
    const linked: LinkedDocument = {
      documentId,
      link,
      handle,
      remotes: new Map(),
      onHeadsChanged: () => this.#schedule(linked),
    }
    this.#documents.set(documentId, linked)
    handle.on('heads-changed', linked.onHeadsChanged)
    const listener: ClusterLinkListener = {
      receive: (kind, payload, from) => this.#receive(linked, kind, payload, from),
      resync: () => this.#restart(linked),
    }
    link.attach(listener)
    this.#publish(linked, { t: 'hello', r: true })
  }

  /** Stops sharing a document about to unload, telling the others */
  async detach(documentId: string) {
    const linked = this.#documents.get(documentId)
    if (!linked) {
      return
    }
    this.#documents.delete(documentId)
    linked.handle.off('heads-changed', linked.onHeadsChanged)
    clearImmediate(linked.pending)
    this.#publish(linked, { t: 'bye' })
    linked.remotes.clear()
    await linked.link.close()
  }

  /**
   * Resolves once every other instance with the document has announced the
   * heads `headsOf()` gives (or after `timeoutMs`), so a document unloaded
   * right after a change does not leave them without it.
   */
  async caughtUp(documentId: string, headsOf: () => string[], timeoutMs: number) {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const linked = this.#documents.get(documentId)
      const heads = headsOf()
      const behind = [...(linked?.remotes.values() ?? [])].some(
        (remote) => !heads.every((head) => remote.heads.includes(head))
      )
      if (!behind || Date.now() >= deadline) {
        return !behind
      }
      await new Promise((resolve) => setTimeout(resolve, CAUGHT_UP_POLL_MS))
    }
  }

  /** Presence from this instance's clients (or their goodbyes), for the other instances' sockets */
  publishEphemeral(documentId: string, message: Record<string, unknown>) {
    const linked = this.#documents.get(documentId)
    if (!linked) {
      return
    }
    const { senderId, sessionId, count, data } = message
    this.#publish(linked, { t: 'ephemeral', s: senderId, n: sessionId, c: count, d: data })
  }

  #publish(linked: LinkedDocument, frame: Frame) {
    linked.link.publish(ClusterMessage.automerge, cbor.encode(frame))
  }

  /** Sends what the other instances lack at the end of this event loop turn, once */
  #schedule(linked: LinkedDocument) {
    if (linked.pending || this.#documents.get(linked.documentId) !== linked) {
      return
    }
    linked.pending = setImmediate(() => {
      linked.pending = undefined
      this.#syncAll(linked)
    })
  }

  #syncAll(linked: LinkedDocument) {
    if (this.#documents.get(linked.documentId) !== linked || linked.remotes.size === 0) {
      return
    }
    const doc = linked.handle.doc() as A.Doc<unknown>
    for (const remote of linked.remotes.values()) {
      this.#sync(linked, remote, doc)
    }
  }

  #sync(linked: LinkedDocument, remote: RemoteInstance, doc: A.Doc<unknown>) {
    const [syncState, message] = A.generateSyncMessage(doc, remote.syncState)
    remote.syncState = syncState
    if (message) {
      this.#publish(linked, { t: 'sync', to: remote.instance, d: message })
    }
  }

  #receive(linked: LinkedDocument, kind: ClusterMessageKind, payload: Uint8Array, from: Buffer) {
    if (kind !== ClusterMessage.automerge || this.#documents.get(linked.documentId) !== linked) {
      return
    }
    let frame: Frame
    try {
      frame = cbor.decode(payload)
      if (!frame || typeof frame !== 'object') {
        return
      }
      this.#handle(linked, frame, from)
    } catch (error) {
      reportCollaborationError({
        scope: 'storage',
        operation: 'cluster.receive',
        docName: linked.link.docName,
        error,
      })
    }
  }

  #handle(linked: LinkedDocument, frame: Frame, from: Buffer) {
    const { t: type, to, d: data } = frame
    const key = from.toString('hex')
    if (type === 'hello') {
      const known = linked.remotes.get(key)
      if (known && frame.r) {
        // it may have missed what this instance sent: both sides start over
        linked.remotes.delete(key)
      }
      const remote = this.#remote(linked, from)
      if (frame.r) {
        this.#publish(linked, { t: 'hello', r: false })
      }
      this.#sync(linked, remote, linked.handle.doc() as A.Doc<unknown>)
      return
    }
    if (type === 'bye') {
      if (linked.remotes.delete(key)) debug('instance %s left %s', key, linked.documentId)
      return
    }
    if (type === 'ephemeral') {
      this.#ephemeral(linked, frame)
      return
    }
    if (type !== 'sync' || !isBytes(data) || !(to instanceof Uint8Array)) {
      return
    }
    if (!this.instanceId.equals(to)) {
      return
    }
    const remote = this.#remote(linked, from)
    const heads = A.decodeSyncMessage(data).heads
    // the handle rethrows what its update threw: the sync state stays as it was
    linked.handle.update((doc) => {
      const [next, syncState] = A.receiveSyncMessage(doc as A.Doc<unknown>, remote.syncState, data)
      remote.syncState = syncState
      return next
    })
    remote.heads = heads
    // the reply (and the change, to the other instances) goes out with the next batch
    this.#schedule(linked)
  }

  #ephemeral(linked: LinkedDocument, frame: Frame) {
    const { s: senderId, n: sessionId, c: count, d: data } = frame
    if (
      !isId(senderId) ||
      !isId(sessionId) ||
      typeof count !== 'number' ||
      !isBytes(data) ||
      data.byteLength > this.#hooks.maxEphemeralBytes
    ) {
      return
    }
    this.#hooks.relayEphemeral(linked.documentId, {
      type: 'ephemeral',
      senderId,
      sessionId,
      count,
      documentId: linked.documentId,
      data,
    })
  }

  /** The record of an instance on a document, made if new */
  #remote(linked: LinkedDocument, instance: Buffer): RemoteInstance {
    const key = instance.toString('hex')
    let remote = linked.remotes.get(key)
    if (remote) {
      // most recently heard last: a crashed instance drifts to the front
      linked.remotes.delete(key)
      linked.remotes.set(key, remote)
      return remote
    }
    if (linked.remotes.size >= MAX_PEERS_PER_DOCUMENT) {
      linked.remotes.delete(linked.remotes.keys().next().value!)
    }
    remote = { instance: Buffer.from(instance), syncState: A.initSyncState(), heads: [] }
    linked.remotes.set(key, remote)
    debug('instance %s joined %s', key, linked.documentId)
    return remote
  }

  /** Redis came back: every instance restarts its sync of the document with this one */
  #restart(linked: LinkedDocument) {
    linked.remotes.clear()
    this.#publish(linked, { t: 'hello', r: true })
  }

  /** The engine closes: the others drop this instance at once */
  disconnect() {
    for (const documentId of [...this.#documents.keys()]) {
      this.detach(documentId).catch(() => {})
    }
  }
}
