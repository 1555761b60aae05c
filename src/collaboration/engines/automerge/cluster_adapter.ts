import * as A from '@automerge/automerge'
import {
  NetworkAdapter,
  cbor,
  type Message,
  type PeerId,
  type PeerMetadata,
} from '@automerge/automerge-repo'
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
  /** True for a peer of this instance's sockets (whose presence may leave the instance) */
  isLocal(peerId: string): boolean
  /** Another instance's client presence, for this instance's sockets on the document */
  relayEphemeral(documentId: string, message: Record<string, unknown>): void
  /** Largest presence payload a socket may send (`limits.maxAwarenessStateBytes`) */
  maxEphemeralBytes: number
}

/** Another instance that has the document open: one peer of the server's repo */
interface RemoteInstance {
  peerId: PeerId
  linked: LinkedDocument
  instance: Buffer
  /** Heads its last sync message announced: what it has */
  heads: string[]
}

/** One open document's link to the other instances */
interface LinkedDocument {
  documentId: string
  link: ClusterLink
  /** By instance id (hex), least recently heard first */
  remotes: Map<string, RemoteInstance>
  /** The last presence message published, so the repo's copy per peer goes out once */
  lastEphemeral?: string
}

type Frame = Record<string, unknown>

/**
 * The other app instances as peers of the server's repo (multiInstance):
 * each instance that has a document open is one peer per document, synced
 * with automerge-repo's own sync protocol over the document's Redis channel.
 * The sync protocol, not the order of Redis messages, makes instances
 * converge: concurrent changes merge, and a message lost while Redis was
 * away is recovered by restarting both sides' sync (their heads and bloom
 * filters say what each lacks).
 *
 * Frames (CBOR, after the cluster's header naming the sender):
 * `hello` (this instance has the document open; `r` asks for a hello back),
 * `bye`, a sync message (`to` names its instance), presence (for all).
 */
export class AutomergeClusterAdapter extends NetworkAdapter {
  #documents = new Map<string, LinkedDocument>()
  #byPeer = new Map<PeerId, RemoteInstance>()
  #hooks: ClusterAdapterHooks
  #ready!: () => void
  #whenReady = new Promise<void>((resolve) => {
    this.#ready = resolve
  })

  constructor(
    readonly instanceId: Buffer,
    hooks: ClusterAdapterHooks
  ) {
    super()
    this.#hooks = hooks
  }

  isReady() {
    return this.peerId !== undefined
  }

  whenReady() {
    return this.#whenReady
  }

  connect(peerId: PeerId, peerMetadata?: PeerMetadata) {
    this.peerId = peerId
    this.peerMetadata = peerMetadata ?? {}
    this.#ready()
  }

  /** The repo's share policy: another instance's peer sees only its document */
  mayShare(peerId: PeerId, documentId?: string) {
    return documentId !== undefined && this.#byPeer.get(peerId)?.linked.documentId === documentId
  }

  /**
   * Starts sharing a loaded document: what the link received during the load
   * is read now, and the others are told this instance has it.
   */
  attach(documentId: string, link: ClusterLink) {
    const linked: LinkedDocument = { documentId, link, remotes: new Map() }
    this.#documents.set(documentId, linked)
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
    this.#publish(linked, { t: 'bye' })
    for (const remote of linked.remotes.values()) {
      this.#forget(remote)
    }
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

  /** Another instance's client left: its presence goes to this instance's sockets too */
  publishGoodbye(documentId: string, message: Record<string, unknown>) {
    const linked = this.#documents.get(documentId)
    if (linked) {
      this.#publishEphemeral(linked, message)
    }
  }

  send(message: Message) {
    const remote = this.#byPeer.get(message.targetId)
    if (!remote) {
      return
    }
    const linked = remote.linked
    if (message.type === 'ephemeral') {
      // only this instance's clients: another instance's reach every instance from it
      if (this.#hooks.isLocal(message.senderId)) {
        this.#publishEphemeral(linked, message as unknown as Record<string, unknown>)
      }
      return
    }
    if (message.type === 'sync' || message.type === 'request') {
      this.#publish(linked, { t: message.type, to: remote.instance, d: message.data })
    } else if (message.type === 'doc-unavailable') {
      this.#publish(linked, { t: message.type, to: remote.instance })
    }
  }

  #publishEphemeral(linked: LinkedDocument, message: Record<string, unknown>) {
    const { senderId, sessionId, count, data } = message
    // the repo hands one copy per peer: every instance hears the one publish
    const key = `${senderId}:${sessionId}:${count}`
    if (linked.lastEphemeral === key) {
      return
    }
    linked.lastEphemeral = key
    this.#publish(linked, { t: 'ephemeral', s: senderId, n: sessionId, c: count, d: data })
  }

  #publish(linked: LinkedDocument, frame: Frame) {
    linked.link.publish(ClusterMessage.automerge, cbor.encode(frame))
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
    if (type === 'hello') {
      const known = linked.remotes.has(from.toString('hex'))
      if (known && frame.r) {
        // it may have missed what this instance sent: both sides start over
        this.#forget(linked.remotes.get(from.toString('hex'))!)
      }
      this.#remote(linked, from)
      if (frame.r) {
        this.#publish(linked, { t: 'hello', r: false })
      }
      return
    }
    if (type === 'bye') {
      const remote = linked.remotes.get(from.toString('hex'))
      if (remote) this.#forget(remote)
      return
    }
    if (type === 'ephemeral') {
      this.#ephemeral(linked, frame)
      return
    }
    if (!(to instanceof Uint8Array) || !this.instanceId.equals(to)) {
      return
    }
    const remote = this.#remote(linked, from)
    if ((type === 'sync' || type === 'request') && isBytes(data)) {
      remote.heads = A.decodeSyncMessage(data).heads
      this.#emitFrom(remote, { type, documentId: linked.documentId, data })
    } else if (type === 'doc-unavailable') {
      this.#emitFrom(remote, { type, documentId: linked.documentId })
    }
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

  #emitFrom(remote: RemoteInstance, message: Record<string, unknown>) {
    this.emit('message', { ...message, senderId: remote.peerId, targetId: this.peerId! } as Message)
  }

  /** The peer of an instance on a document, made (and announced to the repo) if new */
  #remote(linked: LinkedDocument, instance: Buffer): RemoteInstance {
    const key = instance.toString('hex')
    let remote = linked.remotes.get(key)
    if (remote) {
      // most recently heard last: a crashed instance's peer drifts to the front
      linked.remotes.delete(key)
      linked.remotes.set(key, remote)
      return remote
    }
    if (linked.remotes.size >= MAX_PEERS_PER_DOCUMENT) {
      this.#forget(linked.remotes.values().next().value!)
    }
    remote = {
      peerId: `cluster-${key}-${linked.documentId}` as PeerId,
      linked,
      instance: Buffer.from(instance),
      heads: [],
    }
    linked.remotes.set(key, remote)
    this.#byPeer.set(remote.peerId, remote)
    debug('instance %s joined %s', key, linked.documentId)
    this.emit('peer-candidate', { peerId: remote.peerId, peerMetadata: {} })
    return remote
  }

  #forget(remote: RemoteInstance) {
    if (this.#byPeer.get(remote.peerId) !== remote) {
      return
    }
    this.#byPeer.delete(remote.peerId)
    remote.linked.remotes.delete(remote.instance.toString('hex'))
    this.emit('peer-disconnected', { peerId: remote.peerId })
  }

  /** Redis came back: every instance restarts its sync of the document with this one */
  #restart(linked: LinkedDocument) {
    for (const remote of [...linked.remotes.values()]) {
      this.#forget(remote)
    }
    this.#publish(linked, { t: 'hello', r: true })
  }

  /** The engine closes: the others drop this instance's peers at once */
  disconnect() {
    for (const documentId of [...this.#documents.keys()]) {
      this.detach(documentId).catch(() => {})
    }
  }
}
