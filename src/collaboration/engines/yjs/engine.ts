import { performance } from 'node:perf_hooks'
import * as Y from 'yjs'
import * as syncProtocol from 'y-protocols/sync'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import type { WebSocket } from 'ws'
import debug from '../../debug.ts'
import { reportCollaborationError } from '../../observability.ts'
import type { CollabEngine, CollabEngineHost, CollabSession } from '../engine.ts'
import type { LiveDocumentResult } from '../../types.ts'
import { diffStrings, docFromState, flatten, replaceDocContent, textOfDoc } from './content.ts'

const MESSAGE_SYNC = 0
const MESSAGE_AWARENESS = 1
const MESSAGE_AUTH = 2
const MESSAGE_QUERY_AWARENESS = 3

/** Origin of updates read from storage: they are not written back */
const LOAD_ORIGIN = Symbol('atrium:collab:load')
/** Origin of a version restore */
const RESTORE_ORIGIN = Symbol('atrium:collab:restore')

interface Connection {
  socket: WebSocket
  session: CollabSession
  room: YjsRoom
  readOnly: boolean
  /** Awareness client ids this connection announced (created on first use) */
  clients?: Set<number>
}

/** The connection a socket serves, kept on the socket so listeners need no closure */
const CONNECTION = Symbol('atrium:collab:connection')
type ServedSocket = WebSocket & { [CONNECTION]: Connection }

function onSocketMessage(this: WebSocket, data: Buffer) {
  const connection = (this as ServedSocket)[CONNECTION]
  connection.room.receive(connection, data)
}

function onSocketClose(this: WebSocket) {
  const connection = (this as ServedSocket)[CONNECTION]
  connection.room.leave(connection)
}

function onSocketError(this: WebSocket) {
  this.terminate()
}

const NO_MESSAGES: Buffer[] = []
const noop = () => {}

function runCompactCheck(room: YjsRoom) {
  room.compactCheck()
}

function runBroadcast(room: YjsRoom) {
  room.broadcast()
}

function runAwarenessBroadcast(room: YjsRoom) {
  room.broadcastAwareness()
}

interface AwarenessEntry {
  clock: number
  /** JSON of the state, kept encoded: the server relays it without parsing */
  state: string
  connection: Connection
}

function send(socket: WebSocket, frame: Uint8Array) {
  if (socket.readyState === 1) {
    socket.send(frame, { binary: true, compress: false }, (error) => {
      if (error) {
        socket.terminate()
      }
    })
  }
}

function syncUpdateFrame(update: Uint8Array): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MESSAGE_SYNC)
  syncProtocol.writeUpdate(encoder, update)
  return encoding.toUint8Array(encoder)
}

function awarenessFrame(entries: [number, number, string][]): Uint8Array {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, MESSAGE_AWARENESS)
  const inner = encoding.createEncoder()
  encoding.writeVarUint(inner, entries.length)
  for (const [clientId, clock, state] of entries) {
    encoding.writeVarUint(inner, clientId)
    encoding.writeVarUint(inner, clock)
    encoding.writeVarString(inner, state)
  }
  encoding.writeVarUint8Array(encoder, encoding.toUint8Array(inner))
  return encoding.toUint8Array(encoder)
}

/**
 * One open document: its Y.Doc, its connections, the awareness it relays,
 * the batch of updates waiting to be broadcast and the writes waiting for
 * storage.
 */
class YjsRoom {
  readonly doc: Y.Doc
  readonly connections = new Set<Connection>()
  readonly awareness = new Map<number, AwarenessEntry>()
  /** Holders other than sockets (manager operations) keeping the room loaded */
  holds = 0
  unloading?: Promise<void>

  #engine: YjsEngine
  #host: CollabEngineHost
  #outgoing: Uint8Array[] = []
  /** The one connection that wrote the pending batch, null when several (or the server) did */
  #origin: Connection | null | undefined
  #awarenessOutgoing?: Map<number, [number, number, string]>
  #broadcastScheduled = false
  #lastBroadcast = 0
  /** Frames sent in the current and previous 100 ms periods, to detect a busy document */
  #periodStart = 0
  #framesInPeriod = 0
  #framesInPreviousPeriod = 0
  #awarenessScheduled = false
  #lastAwareness = 0
  #fullState?: Uint8Array
  #log: Uint8Array[] = []
  #dirty = false
  #dirtySince = 0
  #lastChangeAt = 0
  #appendTimer?: NodeJS.Timeout
  #compactTimer?: NodeJS.Timeout
  #queue: Promise<void> = Promise.resolve()

  constructor(
    readonly name: string,
    doc: Y.Doc,
    engine: YjsEngine,
    host: CollabEngineHost
  ) {
    this.doc = doc
    this.#engine = engine
    this.#host = host
    doc.on('update', this.#onUpdate)
  }

  #onUpdate = (update: Uint8Array, origin: unknown) => {
    this.#fullState = undefined
    this.#outgoing.push(update)
    const writer = origin instanceof Object && 'socket' in origin ? (origin as Connection) : null
    this.#origin = this.#outgoing.length === 1 ? writer : this.#origin === writer ? writer : null
    this.#scheduleBroadcast()
    if (origin !== LOAD_ORIGIN) {
      this.#markDirty(update)
    }
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
      const frame = syncUpdateFrame(updates.length === 1 ? updates[0] : Y.mergeUpdates(updates))
      // a batch written by one connection is not echoed back to it
      for (const connection of this.connections) {
        if (connection !== only) {
          send(connection.socket, frame)
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
    if (this.#awarenessOutgoing?.size) {
      const frame = awarenessFrame([...this.#awarenessOutgoing.values()])
      this.#awarenessOutgoing = undefined
      for (const connection of this.connections) {
        send(connection.socket, frame)
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

  #markDirty(update: Uint8Array) {
    if (!this.#dirty) {
      this.#dirty = true
      this.#dirtySince = Date.now()
    }
    const storage = this.#host.storage
    if (storage.appendUpdate && storage.compactDocument) {
      this.#log.push(update)
      this.#appendTimer ??= setTimeout(() => {
        this.#appendTimer = undefined
        this.#enqueue('appendUpdate', () => this.#appendLog())
      }, this.#host.appendInterval)
    }
    // debounce without re-arming a timer per update: the timer checks the
    // time of the last change when it fires, and never waits past maxWait
    this.#lastChangeAt = Date.now()
    this.#compactTimer ??= setTimeout(runCompactCheck, this.#host.debounce, this)
  }

  /**
   * Compacts when the document has been quiet for `debounce` or dirty for
   * `maxWait`; otherwise waits for the rest of the quiet time.
   */
  compactCheck() {
    this.#compactTimer = undefined
    if (!this.#dirty) {
      return
    }
    const now = Date.now()
    const quietFor = now - this.#lastChangeAt
    const dirtyFor = now - this.#dirtySince
    if (quietFor >= this.#host.debounce || dirtyFor >= this.#host.maxWait) {
      this.#enqueue('saveDocument', () => this.#compact())
      return
    }
    const wait = Math.min(this.#host.debounce - quietFor, this.#host.maxWait - dirtyFor)
    this.#compactTimer = setTimeout(runCompactCheck, Math.max(1, wait), this)
  }

  async #appendLog() {
    if (this.#log.length === 0) {
      return
    }
    const updates = this.#log
    this.#log = []
    try {
      await this.#host.storage.appendUpdate!(
        this.name,
        updates.length === 1 ? updates[0] : Y.mergeUpdates(updates)
      )
    } catch (error) {
      this.#log.unshift(...updates)
      throw error
    }
  }

  async #compact() {
    if (!this.#dirty) {
      return
    }
    clearTimeout(this.#appendTimer)
    this.#appendTimer = undefined
    const log = this.#log
    const dirtySince = this.#dirtySince
    this.#log = []
    this.#dirty = false
    const state = Y.encodeStateAsUpdate(this.doc)
    const storage = this.#host.storage
    try {
      if (storage.compactDocument) {
        await storage.compactDocument(this.name, state)
      } else {
        await storage.saveDocument(this.name, state)
      }
      debug('saved "%s" (%d bytes)', this.name, state.byteLength)
    } catch (error) {
      this.#log.unshift(...log)
      if (!this.#dirty) {
        this.#dirty = true
        this.#dirtySince = dirtySince
        this.#lastChangeAt = Date.now()
        this.#compactTimer ??= setTimeout(runCompactCheck, this.#host.debounce, this)
      }
      throw error
    }
  }

  #enqueue(operation: string, task: () => Promise<void>) {
    this.#queue = this.#queue.then(task).catch((error) => {
      reportCollaborationError({ scope: 'storage', operation, docName: this.name, error })
    })
    return this.#queue
  }

  /**
   * Writes every pending change now and waits for storage.
   */
  async flush() {
    clearTimeout(this.#compactTimer)
    this.#compactTimer = undefined
    await this.#enqueue('saveDocument', () => this.#compact())
  }

  get idle() {
    return this.connections.size === 0 && this.holds === 0
  }

  destroy() {
    clearTimeout(this.#appendTimer)
    clearTimeout(this.#compactTimer)
    this.doc.off('update', this.#onUpdate)
    this.doc.destroy()
    this.awareness.clear()
    this.#fullState = undefined
  }

  join(socket: WebSocket, session: CollabSession) {
    const connection: Connection = {
      socket,
      session,
      room: this,
      readOnly: !session.permission.canWrite,
    }
    this.connections.add(connection)
    session.stopBuffering()
    ;(socket as ServedSocket)[CONNECTION] = connection
    socket.on('message', onSocketMessage)
    socket.on('close', onSocketClose)
    socket.on('error', onSocketError)

    const encoder = encoding.createEncoder()
    encoding.writeVarUint(encoder, MESSAGE_SYNC)
    syncProtocol.writeSyncStep1(encoder, this.doc)
    send(socket, encoding.toUint8Array(encoder))
    if (this.awareness.size) {
      send(socket, this.#awarenessSnapshot())
    }
    for (const data of session.buffered) {
      this.receive(connection, data)
    }
    this.#host.onJoin(session)
    // the upgrade request holds headers and socket state, the buffer its
    // listener: nothing needs them once the connection has joined
    session.request = undefined
    session.buffered = NO_MESSAGES
    session.stopBuffering = noop
    return connection
  }

  #awarenessSnapshot() {
    return awarenessFrame(
      [...this.awareness].map(([clientId, entry]) => [clientId, entry.clock, entry.state])
    )
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
          send(connection.socket, this.#awarenessSnapshot())
          break
        case MESSAGE_AUTH:
          break
      }
    } catch (error) {
      debug('malformed message on "%s": %s', this.name, (error as Error).message)
      connection.socket.close(4400, 'malformed message')
    }
  }

  #onSync(connection: Connection, decoder: decoding.Decoder) {
    const type = decoding.readVarUint(decoder)
    if (type === syncProtocol.messageYjsSyncStep1) {
      const stateVector = decoding.readVarUint8Array(decoder)
      // an empty state vector (a new client) gets the cached full state
      if (stateVector.byteLength === 1 && stateVector[0] === 0) {
        send(connection.socket, this.#fullStateFrame())
        return
      }
      const encoder = encoding.createEncoder()
      encoding.writeVarUint(encoder, MESSAGE_SYNC)
      syncProtocol.writeSyncStep2(encoder, this.doc, stateVector)
      send(connection.socket, encoding.toUint8Array(encoder))
      return
    }
    if (type === syncProtocol.messageYjsSyncStep2 || type === syncProtocol.messageYjsUpdate) {
      const update = decoding.readVarUint8Array(decoder)
      if (connection.readOnly) {
        // a read-only connection's changes never reach the document, its peers or storage
        return
      }
      Y.applyUpdate(this.doc, update, connection)
    }
  }

  #onAwareness(connection: Connection, update: Uint8Array) {
    const decoder = decoding.createDecoder(update)
    const count = decoding.readVarUint(decoder)
    for (let index = 0; index < count; index++) {
      const clientId = decoding.readVarUint(decoder)
      const clock = decoding.readVarUint(decoder)
      const state = decoding.readVarString(decoder)
      const known = this.awareness.get(clientId)
      if (known && known.clock > clock) {
        continue
      }
      if (state === 'null') {
        this.awareness.delete(clientId)
        connection.clients?.delete(clientId)
      } else {
        this.awareness.set(clientId, { clock, state, connection })
        ;(connection.clients ??= new Set()).add(clientId)
      }
      ;(this.#awarenessOutgoing ??= new Map()).set(clientId, [clientId, clock, state])
    }
    this.#scheduleAwareness()
  }

  leave(connection: Connection) {
    if (!this.connections.delete(connection)) {
      return
    }
    for (const clientId of connection.clients ?? []) {
      const entry = this.awareness.get(clientId)
      if (entry && entry.connection === connection) {
        this.awareness.delete(clientId)
        ;(this.#awarenessOutgoing ??= new Map()).set(clientId, [clientId, entry.clock + 1, 'null'])
      }
    }
    if (connection.clients?.size) {
      this.#scheduleAwareness()
    }
    this.#host.onLeave(connection.session)
    this.#engine.release(this)
  }
}

/**
 * The Yjs engine: documents served with the y-websocket protocol
 * (y-protocols sync and awareness), one frame per batch of updates.
 */
export class YjsEngine implements CollabEngine {
  readonly name = 'yjs' as const
  #host: CollabEngineHost
  #rooms = new Map<string, Promise<YjsRoom>>()
  #open = new Map<string, YjsRoom>()
  #closing = false

  constructor(host: CollabEngineHost) {
    this.#host = host
  }

  async #load(docName: string): Promise<YjsRoom> {
    const doc = new Y.Doc()
    const stored = await this.#host.storage.loadDocument(docName)
    if (stored) {
      doc.transact(() => {
        if (stored.state.byteLength) {
          Y.applyUpdate(doc, stored.state)
        }
        for (const update of stored.updates ?? []) {
          Y.applyUpdate(doc, update)
        }
      }, LOAD_ORIGIN)
    } else {
      let seeded = false
      try {
        const seed = await this.#host.seed(docName)
        if (seed instanceof Uint8Array) {
          if (seed.byteLength) {
            Y.applyUpdate(doc, seed, LOAD_ORIGIN)
            seeded = true
          }
        } else if (seed instanceof Y.Doc) {
          Y.applyUpdate(doc, Y.encodeStateAsUpdate(seed), LOAD_ORIGIN)
          seeded = true
        }
      } catch (error) {
        reportCollaborationError({ scope: 'storage', operation: 'load', docName, error })
      }
      if (seeded) {
        // persisted before anyone is served, so the seed runs once per document
        try {
          await this.#host.storage.saveDocument(docName, Y.encodeStateAsUpdate(doc))
        } catch (error) {
          reportCollaborationError({ scope: 'storage', operation: 'saveDocument', docName, error })
        }
      }
    }
    const room = new YjsRoom(docName, doc, this, this.#host)
    this.#open.set(docName, room)
    debug('loaded "%s"', docName)
    return room
  }

  /**
   * The room of a document, loading it once however many callers ask at once.
   */
  async acquire(docName: string): Promise<YjsRoom> {
    for (;;) {
      let pending = this.#rooms.get(docName)
      if (!pending) {
        pending = this.#load(docName)
        this.#rooms.set(docName, pending)
        pending.catch(() => this.#rooms.delete(docName))
      }
      const room = await pending
      if (!room.unloading) {
        return room
      }
      await room.unloading
    }
  }

  /**
   * Unloads a room nobody uses any more, after its final flush.
   */
  release(room: YjsRoom) {
    if (!room.idle || room.unloading || this.#closing) {
      return
    }
    room.unloading = (async () => {
      await room.flush()
      if (!room.idle) {
        room.unloading = undefined
        return
      }
      this.#rooms.delete(room.name)
      this.#open.delete(room.name)
      room.destroy()
      debug('unloaded "%s"', room.name)
    })()
  }

  async #withRoom<T>(docName: string, run: (room: YjsRoom) => T | Promise<T>): Promise<T> {
    const room = await this.acquire(docName)
    room.holds++
    try {
      return await run(room)
    } finally {
      room.holds--
      this.release(room)
    }
  }

  handleConnection(socket: WebSocket, session: CollabSession) {
    this.acquire(session.docName).then(
      (room) => {
        if (socket.readyState !== 1) {
          this.release(room)
          return
        }
        room.join(socket, session)
      },
      (error) => {
        reportCollaborationError({
          scope: 'storage',
          operation: 'loadDocument',
          docName: session.docName,
          error,
        })
        socket.close(4500, 'document could not be loaded')
      }
    )
  }

  hasLiveDocument(docName: string) {
    return this.#open.has(docName)
  }

  async withLiveDocument<T>(
    docName: string,
    run: (doc: Y.Doc) => T | Promise<T>
  ): Promise<LiveDocumentResult<T>> {
    const room = this.#open.get(docName)
    if (!room || room.unloading) {
      return { live: false, reason: 'not-loaded' }
    }
    room.holds++
    try {
      return { live: true, value: await run(room.doc) }
    } finally {
      room.holds--
      this.release(room)
    }
  }

  async getDocumentState(docName: string): Promise<Uint8Array> {
    const room = this.#open.get(docName)
    if (room && !room.unloading) {
      return Y.encodeStateAsUpdate(room.doc)
    }
    const stored = await this.#host.storage.loadDocument(docName)
    if (!stored) {
      return Y.encodeStateAsUpdate(new Y.Doc())
    }
    const parts = [stored.state, ...(stored.updates ?? [])].filter((part) => part.byteLength)
    return parts.length ? Y.mergeUpdates(parts) : Y.encodeStateAsUpdate(new Y.Doc())
  }

  textOf(state: Uint8Array) {
    const doc = docFromState(state)
    try {
      return textOfDoc(doc)
    } finally {
      doc.destroy()
    }
  }

  async applyState(docName: string, state: Uint8Array) {
    await this.#withRoom(docName, async (room) => {
      Y.applyUpdate(room.doc, state)
      await room.flush()
    })
  }

  async replaceContent(docName: string, state: Uint8Array) {
    const target = docFromState(state)
    try {
      await this.#withRoom(docName, async (room) => {
        replaceDocContent(room.doc, target, RESTORE_ORIGIN)
        await room.flush()
      })
    } finally {
      target.destroy()
    }
  }

  diff(a: Uint8Array, b: Uint8Array) {
    const left = docFromState(a)
    const right = docFromState(b)
    try {
      return diffStrings(flatten(left), flatten(right))
    } finally {
      left.destroy()
      right.destroy()
    }
  }

  openDocuments() {
    return [...this.#open.keys()]
  }

  /**
   * Awareness entries of a document (for tests and the presence roster).
   */
  connectionCount(docName: string) {
    return this.#open.get(docName)?.connections.size ?? 0
  }

  async flushAll() {
    await Promise.all([...this.#open.values()].map((room) => room.flush()))
  }

  async close() {
    this.#closing = true
    const rooms = [...this.#open.values()]
    await Promise.all(rooms.map((room) => room.flush()))
    for (const room of rooms) {
      for (const connection of room.connections) {
        connection.socket.close(1001, 'server shutting down')
      }
      room.destroy()
    }
    this.#open.clear()
    this.#rooms.clear()
  }
}
