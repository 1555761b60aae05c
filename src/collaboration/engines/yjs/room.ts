import { performance } from 'node:perf_hooks'
import * as Y from 'yjs'
import * as syncProtocol from 'y-protocols/sync'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import type { WebSocket } from 'ws'
import debug from '../../debug.ts'
import { CLOSE_CODES } from '../../server/close_codes.ts'
import { guardOf, type SocketGuard } from '../../server/connection.ts'
import type { CollabEngineHost, CollabSession } from '../engine.ts'
import { AwarenessRelay, MESSAGE_AWARENESS } from './awareness.ts'
import { RoomStorage, mergeBounded } from './room_storage.ts'

const MESSAGE_SYNC = 0
const MESSAGE_AUTH = 2
const MESSAGE_QUERY_AWARENESS = 3

/** Origin of updates read from storage: they are not written back */
export const LOAD_ORIGIN = Symbol('atrium:collab:load')

/** Shortest time between two exact measures of a document near its size cap */
const MEASURE_EVERY_MS = 500

/** What a room asks of its engine */
export interface RoomOwner {
  release(room: YjsRoom): void
}

export interface Connection {
  socket: WebSocket
  guard: SocketGuard
  session: CollabSession
  room: YjsRoom
  readOnly: boolean
  /** Order of arrival in the room */
  seq: number
  /** Awareness client ids this connection owns (created on first use) */
  clients?: Set<number>
}

/** The connection a socket serves, kept on the socket so listeners need no closure */
const CONNECTION = Symbol('atrium:collab:connection')
type ServedSocket = WebSocket & { [CONNECTION]: Connection }

function onSocketMessage(this: WebSocket, data: Buffer) {
  const connection = (this as ServedSocket)[CONNECTION]
  if (connection.guard.admit()) {
    connection.room.receive(connection, data)
  }
}

function onSocketClose(this: WebSocket) {
  const connection = (this as ServedSocket)[CONNECTION]
  connection.room.leave(connection)
}

const NO_MESSAGES: Buffer[] = []
const noop = () => {}

function runBroadcast(room: YjsRoom) {
  room.broadcast()
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

  #owner: RoomOwner
  #host: CollabEngineHost
  #joins = 0
  #outgoing: Uint8Array[] = []
  /** The one connection that wrote the pending batch, null when several (or the server) did */
  #origin: Connection | null | undefined
  #broadcastScheduled = false
  #lastBroadcast = 0
  /** Frames sent in the current and previous 100 ms periods, to detect a busy document */
  #periodStart = 0
  #framesInPeriod = 0
  #framesInPreviousPeriod = 0
  #awarenessScheduled = false
  #lastAwareness = 0
  #fullState?: Uint8Array
  /** Size of the state when last measured, and an upper bound of the growth since */
  #measuredBytes: number
  #growthBytes = 0
  #measuredAt = 0

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
    this.#measuredBytes = initialBytes
    this.awareness = new AwarenessRelay(host.limits)
    this.storage = new RoomStorage(name, doc, host, (stateBytes) => {
      this.#measuredBytes = stateBytes
      this.#growthBytes = 0
      this.#measuredAt = performance.now()
      if (this.idle) {
        owner.release(this)
      }
    })
    doc.on('update', this.#onUpdate)
  }

  #onUpdate = (update: Uint8Array, origin: unknown) => {
    this.#fullState = undefined
    this.#growthBytes += update.byteLength
    this.#outgoing.push(update)
    const writer = origin instanceof Object && 'socket' in origin ? (origin as Connection) : null
    this.#origin = this.#outgoing.length === 1 ? writer : this.#origin === writer ? writer : null
    this.#scheduleBroadcast()
    if (origin !== LOAD_ORIGIN) {
      this.storage.markDirty(update)
    }
  }

  /**
   * False when applying `bytes` more could take the document past
   * `limits.maxDocumentBytes`. The bound is the last exact size plus every
   * update since; near the cap the state is measured again, at most every
   * 500 ms, so a writer at the cap cannot make the server encode per message.
   */
  #fits(bytes: number) {
    const max = this.#host.limits.maxDocumentBytes
    if (this.#measuredBytes + this.#growthBytes + bytes <= max) {
      return true
    }
    const now = performance.now()
    if (this.#growthBytes > 0 && now - this.#measuredAt >= MEASURE_EVERY_MS) {
      this.#measuredBytes = Y.encodeStateAsUpdate(this.doc).byteLength
      this.#growthBytes = 0
      this.#measuredAt = now
    }
    return this.#measuredBytes + this.#growthBytes + bytes <= max
  }

  #scheduleBroadcast() {
    if (this.#broadcastScheduled) {
      return
    }
    // a quiet document sends each update at once, as it arrives; one whose
    // fan-out passes 60,000 frames/s batches: frames are spaced by up to
    // 16 ms (0.1 ms per connection), so a burst coalesces into one frame per
    // receiver instead of one per update
    const busy = Math.max(this.#framesInPeriod, this.#framesInPreviousPeriod) > 6000
    if (!busy) {
      this.broadcast()
      return
    }
    this.#broadcastScheduled = true
    const window = Math.min(16, this.connections.size * 0.1)
    const wait = this.#lastBroadcast + window - performance.now()
    if (wait <= 0) {
      // setImmediate runs after every socket read of this I/O phase: one frame per batch
      setImmediate(runBroadcast, this)
    } else {
      setTimeout(runBroadcast, wait, this)
    }
  }

  broadcast() {
    this.#broadcastScheduled = false
    const at = performance.now()
    this.#lastBroadcast = at
    if (at - this.#periodStart >= 100) {
      this.#framesInPreviousPeriod = at - this.#periodStart < 200 ? this.#framesInPeriod : 0
      this.#framesInPeriod = 0
      this.#periodStart = at
    }
    this.#framesInPeriod += this.connections.size
    if (this.#outgoing.length) {
      const updates = this.#outgoing
      const only = this.#origin ?? null
      this.#outgoing = []
      this.#origin = undefined
      const frame = syncUpdateFrame(updates.length === 1 ? updates[0] : mergeBounded(updates))
      // a batch written by one connection is not echoed back to it
      for (const connection of this.connections) {
        if (connection !== only) {
          connection.guard.send(frame)
        }
      }
    }
  }

  /**
   * Presence tolerates more delay than edits: its frames to a crowded
   * document are spaced by up to 100 ms (0.5 ms per connection).
   */
  #scheduleAwareness() {
    if (this.#awarenessScheduled) {
      return
    }
    this.#awarenessScheduled = true
    const window = Math.min(100, this.connections.size * 0.5)
    const wait = this.#lastAwareness + window - performance.now()
    if (wait <= 0) {
      setImmediate(runAwarenessBroadcast, this)
    } else {
      setTimeout(runAwarenessBroadcast, wait, this)
    }
  }

  broadcastAwareness() {
    this.#awarenessScheduled = false
    this.#lastAwareness = performance.now()
    const frame = this.awareness.takeOutgoing()
    if (frame) {
      for (const connection of this.connections) {
        connection.guard.send(frame)
      }
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
    return this.storage.flush()
  }

  get idle() {
    return this.connections.size === 0 && this.holds === 0
  }

  destroy() {
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
    ;(socket as ServedSocket)[CONNECTION] = connection
    socket.on('message', onSocketMessage)
    socket.on('close', onSocketClose)

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
      Y.applyUpdate(this.doc, update, connection)
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
