import {
  NetworkAdapter,
  cbor,
  type Message,
  type PeerId,
  type PeerMetadata,
} from '@automerge/automerge-repo'
import type { WebSocket } from 'ws'
import debug from '../../debug.ts'
import { CLOSE_CODES } from '../../server/close_codes.ts'
import { guardOf, type SocketGuard } from '../../server/connection.ts'
import type { CollabSession } from '../engine.ts'
import { PRESENCE_MARKER, PROTOCOL_V1, isBytes, isId, peerMetadataOf } from './protocol.ts'

/**
 * One socket: a peer of the server's repo that may see exactly one
 * document. Its id inside the repo is the server's (`atrium-<n>`), never the
 * one the client chose, so a client cannot pose as another peer.
 */
export interface AutomergePeer {
  socket: WebSocket
  guard: SocketGuard
  session: CollabSession
  documentId: string
  internalId: PeerId
  /** The peer id the client announced in its `join`, once it has */
  clientId?: PeerId
  /** Messages for the repo waiting for the document to load (undefined once open) */
  held?: Record<string, unknown>[]
  heldBytes: number
  /** The engine counted this socket on its document */
  opened: boolean
}

export interface NetworkAdapterHooks {
  /** A read-only peer's sync message without its changes, or null to drop it */
  readOnly(documentId: string, data: Uint8Array): Uint8Array | null
  /** False when a writer's sync message of `bytes` could take the document past its cap */
  fits(documentId: string, bytes: number): boolean
  /** The socket closed (after the repo was told) */
  left(peer: AutomergePeer): void
  /** A socket's presence (or its goodbye once closed), for the other instances' sockets (multiInstance) */
  ephemeral?(documentId: string, message: Record<string, unknown>): void
}

/** The peer a socket serves, kept on the socket so listeners need no closure */
const PEER = Symbol('atrium:collab:automerge-peer')
type PeerSocket = WebSocket & { [PEER]: AutomergePeer; [ADAPTER]: AtriumNetworkAdapter }
const ADAPTER = Symbol('atrium:collab:automerge-adapter')

function onSocketMessage(this: WebSocket, data: Buffer) {
  const socket = this as PeerSocket
  if (socket[PEER].guard.admit()) {
    socket[ADAPTER].receive(socket[PEER], data)
  }
}

function onSocketClose(this: WebSocket) {
  const socket = this as PeerSocket
  socket[ADAPTER].remove(socket[PEER])
}

const noop = () => {}

/**
 * The automerge-repo WebSocket protocol (CBOR frames, `join`/`peer`
 * handshake, then repo messages) on sockets the upgrade handler has already
 * authenticated and authorized, as a network adapter of the server's repo.
 * Every message is checked against the socket's document: a message about
 * another document never reaches the repo (the client is told the document
 * is unavailable), and none about another document is ever sent to it.
 */
export class AtriumNetworkAdapter extends NetworkAdapter {
  #peers = new Map<PeerId, AutomergePeer>()
  #hooks: NetworkAdapterHooks
  #count = 0
  #ready!: () => void
  #whenReady = new Promise<void>((resolve) => {
    this.#ready = resolve
  })

  #maxHeldBytes: number
  #maxEphemeralBytes: number
  #peerPrefix: string

  /** `peerPrefix` names this instance's sockets apart from other instances' (default `atrium-`) */
  constructor(
    hooks: NetworkAdapterHooks,
    caps: { maxHeldBytes: number; maxEphemeralBytes: number; peerPrefix?: string }
  ) {
    super()
    this.#hooks = hooks
    this.#maxHeldBytes = caps.maxHeldBytes
    this.#maxEphemeralBytes = caps.maxEphemeralBytes
    this.#peerPrefix = caps.peerPrefix ?? 'atrium-'
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

  /** The repo's share policy: a peer sees only its socket's document */
  mayShare(peerId: PeerId, documentId?: string) {
    return this.#peers.get(peerId)?.documentId === documentId
  }

  /**
   * Serves an authorized socket for one document; what the client sent
   * during the handshake is read first. The `join` is answered at once (an
   * automerge-repo client gives up on a server silent for a second); repo
   * messages wait for `open()`, once the document is loaded.
   */
  accept(socket: WebSocket, session: CollabSession, documentId: string): AutomergePeer {
    const peer: AutomergePeer = {
      socket,
      guard: guardOf(socket),
      session,
      documentId,
      internalId: `${this.#peerPrefix}${++this.#count}` as PeerId,
      held: [],
      heldBytes: 0,
      opened: false,
    }
    const served = socket as PeerSocket
    served[PEER] = peer
    served[ADAPTER] = this
    session.stopBuffering()
    socket.on('message', onSocketMessage)
    socket.on('close', onSocketClose)
    for (const data of session.buffered) {
      if (!peer.guard.closed) {
        this.receive(peer, data)
      }
    }
    // the upgrade request and the handshake's buffer listener (whose closure
    // holds the request) are not needed once the socket is read here
    session.buffered = []
    session.request = undefined
    session.stopBuffering = noop
    return peer
  }

  /** The document is loaded: what the peer sent meanwhile reaches the repo */
  open(peer: AutomergePeer) {
    const held = peer.held ?? []
    peer.held = undefined
    peer.heldBytes = 0
    peer.opened = true
    for (const message of held) {
      if (peer.guard.closed) {
        return
      }
      this.#deliver(peer, message)
    }
  }

  #write(peer: AutomergePeer, message: Record<string, unknown>) {
    peer.guard.send(cbor.encode(message))
  }

  receive(peer: AutomergePeer, data: Buffer) {
    let message: Record<string, unknown>
    try {
      message = cbor.decode(data)
    } catch {
      message = null as any
    }
    if (!message || typeof message !== 'object' || typeof message.type !== 'string') {
      peer.guard.close(CLOSE_CODES.malformed, 'malformed message')
      return
    }
    if (message.type === 'join') {
      this.#join(peer, message)
      return
    }
    if (!peer.clientId) {
      // a repo message before the handshake has nobody to come from
      return
    }
    switch (message.type) {
      case 'sync':
      case 'request':
        this.#sync(peer, message)
        return
      case 'ephemeral':
        this.#ephemeral(peer, message)
        return
      case 'doc-unavailable':
        if (message.documentId === peer.documentId) {
          this.#emitMessage(peer, { type: 'doc-unavailable', documentId: peer.documentId })
        }
        return
      default:
        // remote-heads gossip and unknown types: the server does not take part
        return
    }
  }

  #join(peer: AutomergePeer, message: Record<string, unknown>) {
    const { senderId, supportedProtocolVersions } = message
    if (!isId(senderId)) {
      peer.guard.close(CLOSE_CODES.malformed, 'join without a valid senderId')
      return
    }
    if (
      supportedProtocolVersions !== undefined &&
      !(Array.isArray(supportedProtocolVersions) && supportedProtocolVersions.includes(PROTOCOL_V1))
    ) {
      this.#write(peer, {
        type: 'error',
        senderId: this.peerId,
        message: 'unsupported protocol version',
        targetId: senderId,
      })
      peer.guard.close(CLOSE_CODES.malformed, 'unsupported protocol version')
      return
    }
    const rejoin = peer.clientId !== undefined
    peer.clientId = senderId as PeerId
    if (!rejoin) {
      this.#peers.set(peer.internalId, peer)
      this.emit('peer-candidate', {
        peerId: peer.internalId,
        peerMetadata: peerMetadataOf(message.peerMetadata),
      })
    }
    this.#write(peer, {
      type: 'peer',
      senderId: this.peerId,
      peerMetadata: this.peerMetadata,
      selectedProtocolVersion: PROTOCOL_V1,
      targetId: senderId,
    })
  }

  #sync(peer: AutomergePeer, message: Record<string, unknown>) {
    const { documentId, data } = message
    if (!isId(documentId) || !isBytes(data)) {
      peer.guard.close(CLOSE_CODES.malformed, 'malformed sync message')
      return
    }
    if (documentId !== peer.documentId) {
      // this token opens one document: any other is unavailable here
      this.#write(peer, {
        type: 'doc-unavailable',
        senderId: this.peerId,
        targetId: peer.clientId,
        documentId,
      })
      return
    }
    this.#emitMessage(peer, { type: message.type, documentId, data })
  }

  #ephemeral(peer: AutomergePeer, message: Record<string, unknown>) {
    const { documentId, data, count, sessionId, senderId } = message
    if (
      // a client's repo forwards what it received from the server back to it;
      // relabelled as this socket's, that echo would reach the others as a new
      // message from this peer. The server relays to everyone: only a client's own count.
      senderId !== peer.clientId ||
      documentId !== peer.documentId ||
      !isBytes(data) ||
      typeof count !== 'number' ||
      !isId(sessionId)
    ) {
      return
    }
    // presence is relayed to every peer: it gets the cap an awareness state has
    if (data.byteLength > this.#maxEphemeralBytes) {
      peer.guard.close(CLOSE_CODES.tooLarge, 'ephemeral message over maxAwarenessStateBytes')
      return
    }
    try {
      // the repo decodes it to emit it on the handle; a bad one is dropped here
      cbor.decode(data)
    } catch {
      peer.guard.close(CLOSE_CODES.malformed, 'malformed ephemeral message')
      return
    }
    this.#emitMessage(peer, { type: 'ephemeral', documentId, data, count, sessionId })
  }

  #emitMessage(peer: AutomergePeer, message: Record<string, unknown>) {
    if (peer.held) {
      peer.heldBytes += (message.data as Uint8Array | undefined)?.byteLength ?? 0
      if (peer.heldBytes > this.#maxHeldBytes) {
        peer.guard.close(CLOSE_CODES.tooLarge, 'too much data before the document loaded')
        return
      }
      peer.held.push(message)
      return
    }
    this.#deliver(peer, message)
  }

  #deliver(peer: AutomergePeer, message: Record<string, unknown>) {
    const { type, documentId, data } = message as {
      type: string
      documentId: string
      data: Uint8Array
    }
    const isSync = type === 'sync' || type === 'request'
    if (
      isSync &&
      peer.session.permission.canWrite &&
      !this.#hooks.fits(documentId, data.byteLength)
    ) {
      debug('refused a sync message to %s: over maxDocumentBytes', documentId)
      peer.guard.close(CLOSE_CODES.tooLarge, 'document too large')
      return
    }
    if (isSync && !peer.session.permission.canWrite) {
      let payload: Uint8Array | null
      try {
        payload = this.#hooks.readOnly(documentId, data)
      } catch {
        peer.guard.close(CLOSE_CODES.malformed, 'malformed sync message')
        return
      }
      if (!payload) {
        return
      }
      message = { ...message, data: payload }
    }
    const delivered = { ...message, senderId: peer.internalId, targetId: this.peerId! }
    this.emit('message', delivered as Message)
    if (type === 'ephemeral') {
      this.#hooks.ephemeral?.(documentId, delivered)
    }
  }

  send(message: Message) {
    const peer = this.#peers.get(message.targetId)
    if (!peer?.clientId) {
      return
    }
    if (message.documentId !== undefined && message.documentId !== peer.documentId) {
      debug('dropped a message about another document for peer %s', peer.internalId)
      return
    }
    const outgoing: Record<string, unknown> = { ...message, targetId: peer.clientId }
    this.#write(peer, outgoing)
  }

  remove(peer: AutomergePeer) {
    if (this.#peers.get(peer.internalId) === peer) {
      this.#peers.delete(peer.internalId)
      this.emit('peer-disconnected', { peerId: peer.internalId })
      if (peer.clientId) this.#sayGoodbyeFor(peer)
    }
    this.#hooks.left(peer)
  }

  /**
   * A closed tab never says goodbye itself: on its behalf, the document's
   * other clients get automerge-repo's presence goodbye from its id, so they
   * forget it at once, as Yjs clients do when the server drops an awareness
   * state, instead of after the presence time to live.
   */
  #sayGoodbyeFor(gone: AutomergePeer) {
    const message = {
      type: 'ephemeral',
      senderId: gone.internalId,
      documentId: gone.documentId,
      // its own session: the count is the first of it whatever the peer sent before
      sessionId: `${gone.internalId}-closed`,
      count: 1,
      data: cbor.encode({ [PRESENCE_MARKER]: { type: 'goodbye' } }),
    }
    this.relayEphemeral(gone.documentId, message)
    this.#hooks.ephemeral?.(gone.documentId, message)
  }

  /** Writes a presence message to every socket on the document */
  relayEphemeral(documentId: string, message: Record<string, unknown>) {
    for (const peer of this.#peers.values()) {
      if (peer.documentId === documentId && peer.clientId) {
        this.#write(peer, { ...message, targetId: peer.clientId })
      }
    }
  }

  /** Peers connected to a document */
  peersOf(documentId: string) {
    return [...this.#peers.values()].filter((peer) => peer.documentId === documentId)
  }

  disconnect() {
    for (const peer of [...this.#peers.values()]) {
      peer.guard.close(CLOSE_CODES.goingAway, 'server shutting down')
    }
  }
}
