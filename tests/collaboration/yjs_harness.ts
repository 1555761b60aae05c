import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as Y from 'yjs'
import * as syncProtocol from 'y-protocols/sync'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import { WebSocket, WebSocketServer } from 'ws'
import { YjsEngine } from '../../src/collaboration/engines/yjs/engine.ts'
import { SocketGuard } from '../../src/collaboration/server/connection.ts'
import { DEFAULT_LIMITS, type CollaborationLimits } from '../../src/collaboration/limits.ts'
import { InMemoryCollaborationStorage } from '../../src/collaboration/storage/memory.ts'
import type { CollabEngineHost, CollabSession } from '../../src/collaboration/engines/engine.ts'
import type { CollabDocumentSeed, MergeUpdates } from '../../src/collaboration/types.ts'

/**
 * Database-free harness of the Yjs engine: a bare `node:http` server whose
 * upgrades go straight to `YjsEngine.handleConnection` (no app, no tokens),
 * real `ws` clients speaking y-protocols, and an in-memory storage that
 * records each write and fails when told to.
 */

/** Resolves once `check` is true, polling each millisecond; rejects after `timeoutMs` */
export async function waitFor(check: () => boolean, timeoutMs = 3000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error('waitFor: condition not met in time')
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/** Runs `run` with `Date.now()` reading `ms` */
export function at<T>(ms: number, run: () => T): T {
  const realNow = Date.now
  Date.now = () => ms
  try {
    return run()
  } finally {
    Date.now = realNow
  }
}

export interface StorageCall {
  operation: 'saveDocument' | 'appendUpdate' | 'compactDocument'
  docName: string
  bytes: Uint8Array
  merge?: MergeUpdates
  at: number
}

/** The in-memory storage, recording each write; `failures` writes fail first */
export class RecordingStorage extends InMemoryCollaborationStorage {
  calls: StorageCall[] = []
  loads: string[] = []
  /** Document writes (save, compact) still to fail */
  failures = 0
  /** Appends still to fail */
  failAppends = 0
  /** Loads still to fail */
  failLoads = 0
  /** Held writes wait for it */
  gate?: Promise<void>
  /** Held loads wait for it */
  loadGate?: Promise<void>

  constructor(options: { log?: boolean } = {}) {
    super()
    if (options.log === false) {
      ;(this as { appendUpdate?: unknown }).appendUpdate = undefined
      ;(this as { compactDocument?: unknown }).compactDocument = undefined
    }
  }

  async #write(call: Omit<StorageCall, 'at'>, failAppend = false) {
    this.calls.push({ ...call, at: performance.now() })
    await this.gate
    if (failAppend ? this.failAppends-- > 0 : this.failures-- > 0) {
      throw new Error('storage down')
    }
  }

  override async loadDocument(docName: string) {
    this.loads.push(docName)
    await this.loadGate
    if (this.failLoads-- > 0) {
      throw new Error('storage down')
    }
    return super.loadDocument(docName)
  }

  override async saveDocument(docName: string, state: Uint8Array) {
    await this.#write({ operation: 'saveDocument', docName, bytes: state })
    return super.saveDocument(docName, state)
  }

  override async appendUpdate(docName: string, update: Uint8Array) {
    await this.#write({ operation: 'appendUpdate', docName, bytes: update }, true)
    return super.appendUpdate(docName, update)
  }

  override async compactDocument(docName: string, state: Uint8Array, merge?: MergeUpdates) {
    await this.#write({ operation: 'compactDocument', docName, bytes: state, merge })
    // the base class saves through `saveDocument`: not a write of its own here
    const stored = await super.loadDocument(docName)
    const parts = stored
      ? [stored.state, ...stored.updates!, state].filter((p) => p.byteLength)
      : []
    await super.saveDocument(docName, merge && parts.length > 1 ? merge(parts) : state)
  }

  /** The stored document's text (state and log), '' when never stored */
  async storedText(docName: string) {
    const stored = await super.loadDocument(docName)
    const doc = new Y.Doc()
    for (const part of stored ? [stored.state, ...(stored.updates ?? [])] : []) {
      if (part.byteLength) Y.applyUpdate(doc, part)
    }
    return doc.getText('t').toString()
  }
}

export interface EngineHarness {
  engine: YjsEngine
  storage: RecordingStorage
  host: CollabEngineHost
  url: string
  joined: string[]
  left: string[]
  /** Every session handed to the engine, in order */
  sessions: CollabSession[]
  close(): Promise<void>
}

/** Starts an engine behind a bare HTTP server; `?write=0` in the URL makes a read-only client */
export async function startEngine(
  options: {
    limits?: Partial<CollaborationLimits>
    storage?: RecordingStorage
    seed?: (docName: string) => Promise<CollabDocumentSeed>
    debounce?: number
    /** Messages each connection is given as sent during the handshake */
    buffered?: (docName: string) => Buffer[]
  } = {}
): Promise<EngineHarness> {
  const storage = options.storage ?? new RecordingStorage()
  const joined: string[] = []
  const left: string[] = []
  const sessions: CollabSession[] = []
  const host: CollabEngineHost = {
    storage,
    debounce: options.debounce ?? 60_000,
    maxWait: 120_000,
    appendInterval: 60_000,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    seed: options.seed ?? (async () => null),
    onJoin: (session) => joined.push(session.id),
    onLeave: (session) => left.push(session.id),
  }
  const engine = new YjsEngine(host)
  const wss = new WebSocketServer({ noServer: true })
  const server: Server = createServer()
  let ids = 0
  server.on('upgrade', (request, socket, head) => {
    const url = new URL(request.url!, 'http://localhost')
    const docName = url.pathname.slice(1)
    wss.handleUpgrade(request, socket, head, (ws) => {
      new SocketGuard(ws, host.limits, undefined, undefined, socket)
      const session: CollabSession = {
        id: String(++ids),
        docName,
        context: { userId: 'u' },
        permission: {
          canRead: true,
          canWrite: url.searchParams.get('write') !== '0',
          canComment: false,
        },
        request,
        buffered: options.buffered?.(docName) ?? [],
        stopBuffering: () => {},
      }
      sessions.push(session)
      engine.handleConnection(ws, session)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    engine,
    storage,
    host,
    url: `ws://127.0.0.1:${port}`,
    joined,
    left,
    sessions,
    async close() {
      await engine.close().catch(() => {})
      for (const client of wss.clients) client.terminate()
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}

/** One decoded server message */
export type Received =
  | { kind: 'step1'; stateVector: Uint8Array }
  | { kind: 'step2'; update: Uint8Array }
  | { kind: 'update'; update: Uint8Array }
  | { kind: 'awareness'; entries: Array<{ clientId: number; clock: number; state: string }> }

function decodeMessage(data: Uint8Array): Received {
  const decoder = decoding.createDecoder(data)
  const type = decoding.readVarUint(decoder)
  if (type === 1) {
    const inner = decoding.createDecoder(decoding.readVarUint8Array(decoder))
    const count = decoding.readVarUint(inner)
    const entries = []
    for (let index = 0; index < count; index++) {
      entries.push({
        clientId: decoding.readVarUint(inner),
        clock: decoding.readVarUint(inner),
        state: decoding.readVarString(inner),
      })
    }
    return { kind: 'awareness', entries }
  }
  const syncType = decoding.readVarUint(decoder)
  const payload = decoding.readVarUint8Array(decoder)
  if (syncType === 0) return { kind: 'step1', stateVector: payload }
  return syncType === 1 ? { kind: 'step2', update: payload } : { kind: 'update', update: payload }
}

/** A y-websocket-like client: every message it receives, decoded, and the close code */
export class Client {
  readonly received: Received[] = []
  closeCode?: number
  /** The reason the server gave with its close code */
  closeReason?: string
  readonly closed: Promise<number>
  readonly doc = new Y.Doc()

  constructor(readonly socket: WebSocket) {
    socket.binaryType = 'nodebuffer'
    socket.on('message', (data: Buffer) => {
      const message = decodeMessage(new Uint8Array(data))
      this.received.push(message)
      if (message.kind !== 'awareness' && message.kind !== 'step1') {
        Y.applyUpdate(this.doc, message.update)
      }
    })
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        this.closeCode = code
        this.closeReason = reason.toString()
        resolve(code)
      })
    )
  }

  static async open(url: string) {
    // listening before the open: the first frame can arrive with the 101 response
    const client = new Client(new WebSocket(url))
    await new Promise((resolve, reject) => {
      client.socket.once('open', resolve)
      client.socket.once('error', reject)
    })
    return client
  }

  /** Opens and waits for the server's sync step 1 (the client has joined the room) */
  static async joined(url: string) {
    const client = await Client.open(url)
    await client.next('step1')
    return client
  }

  of<K extends Received['kind']>(kind: K) {
    return this.received.filter((message) => message.kind === kind) as Extract<
      Received,
      { kind: K }
    >[]
  }

  /** The `count`-th message of a kind (1-based), once it arrived */
  async next<K extends Received['kind']>(kind: K, count = 1) {
    await waitFor(() => this.of(kind).length >= count)
    return this.of(kind)[count - 1]
  }

  send(bytes: Uint8Array) {
    this.socket.send(bytes)
  }

  /** Sync step 1 with `stateVector` (the client doc's when omitted) */
  sendStep1(stateVector = Y.encodeStateVector(this.doc)) {
    const encoder = encoding.createEncoder()
    encoding.writeVarUint(encoder, 0)
    encoding.writeVarUint(encoder, syncProtocol.messageYjsSyncStep1)
    encoding.writeVarUint8Array(encoder, stateVector)
    this.send(encoding.toUint8Array(encoder))
  }

  /** Types `text` at the end of the client's text and sends the update (type 2, or step 2) */
  type(text: string, messageType: number = syncProtocol.messageYjsUpdate) {
    const before = Y.encodeStateVector(this.doc)
    this.doc.getText('t').insert(this.doc.getText('t').length, text)
    const update = Y.encodeStateAsUpdate(this.doc, before)
    this.send(syncFrame(update, messageType))
    return update
  }

  text() {
    return this.doc.getText('t').toString()
  }

  close() {
    this.socket.close()
    return this.closed
  }
}

export function syncFrame(update: Uint8Array, messageType: number = syncProtocol.messageYjsUpdate) {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, 0)
  encoding.writeVarUint(encoder, messageType)
  encoding.writeVarUint8Array(encoder, update)
  return encoding.toUint8Array(encoder)
}

/** A state holding `text` in the text 't' */
export function stateWith(text: string) {
  const doc = new Y.Doc()
  doc.getText('t').insert(0, text)
  return Y.encodeStateAsUpdate(doc)
}
