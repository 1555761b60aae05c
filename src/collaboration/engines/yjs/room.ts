import { performance } from 'node:perf_hooks'
import * as Y from 'yjs'
import * as syncProtocol from 'y-protocols/sync'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import type { WebSocket } from 'ws'
import debug from '../../debug.ts'
import { CLOSE_CODES } from '../../server/close_codes.ts'
import { guardOf, sharedFrame } from '../../server/connection.ts'
import type { CollabEngineHost, CollabSession } from '../engine.ts'
import { DocumentSizeBound } from '../size_bound.ts'
import { AwarenessRelay, MESSAGE_AWARENESS, type AwarenessPeer } from './awareness.ts'
import { AdaptiveWindow } from './adaptive_window.ts'
import { RoomStorage, mergeBounded } from './room_storage.ts'
import { listen, type Connection } from './room_connection.ts'

export type { Connection } from './room_connection.ts'

const MESSAGE_SYNC = 0
const MESSAGE_AUTH = 2
const MESSAGE_QUERY_AWARENESS = 3

/** Origin of updates read from storage: they are not written back */
export const LOAD_ORIGIN = Symbol('atrium:collab:load')

/** Origin of updates another app instance applied: that instance stores them */
export const REMOTE_ORIGIN = Symbol('atrium:collab:remote')

/** Shortest time between two exact measures of a document near its size cap */
/** Updates waiting to be applied at most: a larger batch is applied at once */
const MAX_BATCH = 512
/** Longest spacing of a document's update frames, and of its awareness frames */
const UPDATE_WINDOW_CAP_MS = 16
const AWARENESS_WINDOW_CAP_MS = 5

/** What a room asks of its engine */
export interface RoomOwner {
  release(room: YjsRoom): void
}

const NO_MESSAGES: Buffer[] = []
const noop = () => {}

function runDeliver(room: YjsRoom) {
  room.deliver()
}

function runAwarenessBroadcast(room: YjsRoom) {
  room.broadcastAwareness()
}

function syncUpdateFrame(update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MESSAGE_SYNC)
  syncProtocol.writeUpdate(encoder, update)
  return encoding.toUint8Array(encoder)
}

/**
 * One open document: its Y.Doc, its connections, the awareness it relays,
 * the batch of updates waiting to be broadcast and its storage writes.
 */
export class YjsRoom {
  readonly doc: Y.Doc
  readonly connections = new Set<Connection>()
  readonly awareness: AwarenessRelay
  readonly storage: RoomStorage
  /** Holders other than sockets (manager operations) keeping the room loaded */
  holds = 0
  unloading?: Promise<void>
  /** The clients of other app instances, as one awareness peer (multiInstance) */
  readonly remotePeer: AwarenessPeer = { seq: 0, remote: true }
  /** Told when this instance's presence changes were broadcast (multiInstance) */
  onAwarenessBroadcast?: () => void
  /** The link to the other app instances (multiInstance), closed with the room */
  cluster?: { close(): Promise<void> }

  #owner: RoomOwner
  #host: CollabEngineHost
  #joins = 0
  /** Updates received and not applied yet, and who sent each */
  #incoming: Uint8Array[] = []
  #senders: Connection[] = []
  #incomingBytes = 0
  #outgoing: Uint8Array[] = []
  /** The one connection that wrote the pending batch, null when several (or the server) did */
  #origin: Connection | null | undefined
  #deliveryScheduled = false
  // 1.5: the spacing the published latency figures were measured with (see docs/collaboration.md)
  #updateWindow = new AdaptiveWindow(1.5, UPDATE_WINDOW_CAP_MS)
  #awarenessScheduled = false
  #awarenessWindow = new AdaptiveWindow(3, AWARENESS_WINDOW_CAP_MS)
  #fullState?: Uint8Array
  /** Size of the state when last measured, and an upper bound of the growth since */
  #size: DocumentSizeBound

  constructor(
    readonly name: string,
    doc: Y.Doc,
    owner: RoomOwner,
    host: CollabEngineHost,
    initialBytes: number
  ) {
    this.doc = doc
    this.#owner = owner
    this.#host = host
    this.#size = new DocumentSizeBound(initialBytes)
    this.awareness = new AwarenessRelay(host.limits)
    this.storage = new RoomStorage(name, doc, host, (stateBytes) => {
      this.#size.measured(stateBytes)
      if (this.idle) {
        owner.release(this)
      }
    })
    doc.on('update', this.#onUpdate)
  }

  #onUpdate = (update: Uint8Array, origin: unknown) => {
    this.#fullState = undefined
    this.#size.grew(update.byteLength)
    this.#outgoing.push(update)
    const writer = origin instanceof Object && 'socket' in origin ? (origin as Connection) : null
    this.#origin = this.#outgoing.length === 1 ? writer : this.#origin === writer ? writer : null
    this.#scheduleDelivery()
    if (origin === REMOTE_ORIGIN) {
      // its instance logs it; this one only compacts it, so it survives that instance
      this.storage.markDirty(update, false)
    } else if (origin !== LOAD_ORIGIN) {
      this.storage.markDirty(update)
    }
  }

  /**
   * False when applying `bytes` more (after the updates already queued)
   * could take the document past `limits.maxDocumentBytes`.
   */
  #fits(bytes: number) {
    return this.#size.fits(
      bytes + this.#incomingBytes,
      this.#host.limits.maxDocumentBytes,
      () => Y.encodeStateAsUpdate(this.doc).byteLength
    )
  }

  #scheduleDelivery() {
    if (!this.#deliveryScheduled) {
      this.#deliveryScheduled = true
      this.#updateWindow.schedule(runDeliver, this)
    }
  }

  /**
   * Applies the updates received since the last delivery in one transaction
   * (one state vector, one cleanup and one 'update' event for the batch:
   * Yjs encodes the batch as one update, no merge needed), then broadcasts.
   */
  deliver() {
    const start = performance.now()
    try {
      this.applyIncoming()
    } finally {
      // cleared once the batch is applied (its own 'update' event is broadcast
      // below, not by a second, empty delivery), and even if applying threw,
      // so a failure never stops the room's deliveries
      this.#deliveryScheduled = false
    }
    this.broadcast()
    this.#updateWindow.ran(start, performance.now())
  }

  applyIncoming() {
    const updates = this.#incoming
    if (!updates.length) {
      return
    }
    const senders = this.#senders
    this.#incoming = []
    this.#senders = []
    this.#incomingBytes = 0
    const first = senders[0]
    const origin = senders.every((sender) => sender === first) ? first : null
    this.doc.transact(() => {
      for (const [index, update] of updates.entries()) {
        try {
          Y.applyUpdate(this.doc, update, origin)
        } catch (error) {
          debug('malformed update on "%s": %s', this.name, (error as Error).message)
          senders[index].guard.close(CLOSE_CODES.malformed, 'malformed message')
        }
      }
    }, origin)
  }

  broadcast() {
    if (this.#outgoing.length) {
      const updates = this.#outgoing
      const only = this.#origin ?? null
      this.#outgoing = []
      this.#origin = undefined
      const frame = sharedFrame(
        syncUpdateFrame(updates.length === 1 ? updates[0] : mergeBounded(updates))
      )
      // a batch written by one connection is not echoed back to it
      for (const connection of this.connections) {
        if (connection !== only) {
          connection.guard.sendShared(frame)
        }
      }
    }
  }

  /** Awareness frames are spaced like updates, by at most 5 ms */
  #scheduleAwareness() {
    if (!this.#awarenessScheduled) {
      this.#awarenessScheduled = true
      this.#awarenessWindow.schedule(runAwarenessBroadcast, this)
    }
  }

  broadcastAwareness() {
    this.#awarenessScheduled = false
    const start = performance.now()
    const payload = this.awareness.takeOutgoing()
    if (payload) {
      const frame = sharedFrame(payload)
      for (const connection of this.connections) {
        connection.guard.sendShared(frame)
      }
    }
    this.#awarenessWindow.ran(start, performance.now())
    this.onAwarenessBroadcast?.()
  }

  /** Presence changes of other app instances' clients, relayed to this one's */
  applyRemoteAwareness(update: Uint8Array) {
    this.awareness.apply(this.remotePeer, update, this.#joins)
    if (this.awareness.pending) {
      this.#scheduleAwareness()
    }
  }

  /** Drops other instances' clients not heard of for `maxAgeMs` (their instance stopped) */
  expireRemoteAwareness(maxAgeMs: number) {
    if (this.awareness.expireRemote(this.remotePeer, maxAgeMs, this.#joins)) {
      this.#scheduleAwareness()
    }
  }

  /**
   * The sync step 2 answering a client that has nothing yet: the whole
   * state, encoded once until the document changes.
   */
  #fullStateFrame(): Uint8Array {
    if (!this.#fullState) {
      const encoder = encoding.createEncoder()
      encoding.writeVarUint(encoder, MESSAGE_SYNC)
      encoding.writeVarUint(encoder, syncProtocol.messageYjsSyncStep2)
      encoding.writeVarUint8Array(encoder, Y.encodeStateAsUpdate(this.doc))
      this.#fullState = encoding.toUint8Array(encoder)
    }
    return this.#fullState
  }

  /**
   * Writes every pending change now; rejects when storage refused it.
   */
  flush() {
    this.deliver()
    return this.storage.flush()
  }

  get idle() {
    return this.connections.size === 0 && this.holds === 0
  }

  destroy() {
    this.deliver()
    this.cluster?.close().catch(noop)
    this.storage.destroy()
    this.doc.off('update', this.#onUpdate)
    this.doc.destroy()
    this.awareness.clear()
    this.#fullState = undefined
  }

  join(socket: WebSocket, session: CollabSession) {
    const connection: Connection = {
      socket,
      guard: guardOf(socket),
      session,
      room: this,
      readOnly: !session.permission.canWrite,
      seq: ++this.#joins,
    }
    this.connections.add(connection)
    session.stopBuffering()
    listen(socket, connection)

    const encoder = encoding.createEncoder()
    encoding.writeVarUint(encoder, MESSAGE_SYNC)
    syncProtocol.writeSyncStep1(encoder, this.doc)
    connection.guard.send(encoding.toUint8Array(encoder))
    if (this.awareness.size) {
      connection.guard.send(this.awareness.snapshot())
    }
    for (const data of session.buffered) {
      if (!connection.guard.closed) {
        this.receive(connection, data)
      }
    }
    this.#host.onJoin(session)
    // the upgrade request holds headers and socket state, the buffer its
    // listener: nothing needs them once the connection has joined
    session.request = undefined
    session.buffered = NO_MESSAGES
    session.stopBuffering = noop
    return connection
  }

  receive(connection: Connection, data: Buffer) {
    try {
      const decoder = decoding.createDecoder(
        new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      )
      const type = decoding.readVarUint(decoder)
      switch (type) {
        case MESSAGE_SYNC:
          this.#onSync(connection, decoder)
          break
        case MESSAGE_AWARENESS:
          this.#onAwareness(connection, decoding.readVarUint8Array(decoder))
          break
        case MESSAGE_QUERY_AWARENESS:
          if (connection.guard.admitQuery()) {
            connection.guard.send(this.awareness.snapshot())
          }
          break
        case MESSAGE_AUTH:
          break
      }
    } catch (error) {
      debug('malformed message on "%s": %s', this.name, (error as Error).message)
      connection.guard.close(CLOSE_CODES.malformed, 'malformed message')
    }
  }

  #onSync(connection: Connection, decoder: decoding.Decoder) {
    const type = decoding.readVarUint(decoder)
    if (type === syncProtocol.messageYjsSyncStep1) {
      // the answer includes every update received before this message
      this.applyIncoming()
      const stateVector = decoding.readVarUint8Array(decoder)
      // an empty state vector (a new client) gets the cached full state
      if (stateVector.byteLength === 1 && stateVector[0] === 0) {
        connection.guard.send(this.#fullStateFrame())
        return
      }
      const encoder = encoding.createEncoder()
      encoding.writeVarUint(encoder, MESSAGE_SYNC)
      syncProtocol.writeSyncStep2(encoder, this.doc, stateVector)
      connection.guard.send(encoding.toUint8Array(encoder))
      return
    }
    if (type === syncProtocol.messageYjsSyncStep2 || type === syncProtocol.messageYjsUpdate) {
      const update = decoding.readVarUint8Array(decoder)
      if (connection.readOnly) {
        // a read-only connection's changes never reach the document, its peers or storage
        return
      }
      if (!this.#fits(update.byteLength)) {
        debug('refused an update to "%s": over maxDocumentBytes', this.name)
        connection.guard.close(CLOSE_CODES.tooLarge, 'document too large')
        return
      }
      this.#incoming.push(update)
      this.#senders.push(connection)
      this.#incomingBytes += update.byteLength
      if (this.#incoming.length >= MAX_BATCH) {
        this.applyIncoming()
      }
      this.#scheduleDelivery()
      return
    }
    throw new Error(`unknown sync message type ${type}`)
  }

  #onAwareness(connection: Connection, update: Uint8Array) {
    const refused = this.awareness.apply(connection, update, this.#joins)
    if (this.awareness.pending) {
      this.#scheduleAwareness()
    }
    if (refused !== null) {
      connection.guard.close(refused, 'awareness over its limits')
    }
  }

  leave(connection: Connection) {
    if (!this.connections.delete(connection)) {
      return
    }
    if (this.awareness.removeOwnedBy(connection, this.#joins)) {
      this.#scheduleAwareness()
    }
    this.#host.onLeave(connection.session)
    this.#owner.release(this)
  }
}
