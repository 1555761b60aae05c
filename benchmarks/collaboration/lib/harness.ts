/**
 * Drives collaboration servers from the benchmark process: starts each in a
 * child process, and connects light protocol clients (y-websocket wire
 * protocol, or Hocuspocus' document-prefixed variant with its auth message).
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'
import * as decoding from 'lib0/decoding'
import * as syncProtocol from 'y-protocols/sync'
import { WebSocket } from 'ws'
import { signCollabToken } from '../../../src/collaboration/tokens.ts'

export type ServerKind = 'atrium' | 'y-websocket' | 'hocuspocus'
export const SERVER_KINDS: ServerKind[] = ['atrium', 'y-websocket', 'hocuspocus']

export interface ServerStats {
  rss: number
  heapUsed: number
  external: number
  cpu: { user: number; system: number }
  openDocuments: number
}

export interface RunningServer {
  kind: ServerKind
  port: number
  child: ChildProcess
  stats(): Promise<ServerStats>
  stop(): Promise<void>
}

const entry = fileURLToPath(new URL('./server_process.ts', import.meta.url))

export async function startServer(kind: ServerKind, mode = 'storage'): Promise<RunningServer> {
  const child = fork(entry, [kind, mode], {
    execArgv: ['--import=@poppinss/ts-exec', '--expose-gc'],
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production' },
  })
  const port = await new Promise<number>((resolve, reject) => {
    let output = ''
    child.stdout!.on('data', (chunk) => {
      output += chunk
      const match = output.match(/PORT=(\d+)/)
      if (match) {
        resolve(Number(match[1]))
      }
    })
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)))
  })
  let nextId = 0
  return {
    kind,
    port,
    child,
    stats() {
      const id = ++nextId
      return new Promise((resolve) => {
        const listener = (message: any) => {
          if (message?.id === id) {
            child.off('message', listener)
            resolve(message)
          }
        }
        child.on('message', listener)
        child.send({ cmd: 'stats', id })
      })
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await exited
    },
  }
}

function frame(prefix: string | null, write: (encoder: encoding.Encoder) => void) {
  const encoder = encoding.createEncoder()
  if (prefix !== null) {
    encoding.writeVarString(encoder, prefix)
  }
  write(encoder)
  return encoding.toUint8Array(encoder)
}

export interface ClientOptions {
  /** Applies incoming updates to a Y.Doc (observers); writers only send */
  observe?: boolean
  onUpdate?: (doc: Y.Doc) => void
}

/**
 * One connected client: its own Y.Doc, sync handled, updates sent as they happen.
 */
export class BenchClient {
  readonly doc = new Y.Doc()
  socket!: WebSocket
  synced!: Promise<void>
  #prefix: string | null
  #server: RunningServer
  #docName: string
  #options: ClientOptions

  constructor(server: RunningServer, docName: string, options: ClientOptions = {}) {
    this.#server = server
    this.#docName = docName
    this.#prefix = server.kind === 'hocuspocus' ? docName : null
    this.#options = options
  }

  send(data: Uint8Array) {
    if (this.socket.readyState === 1) {
      this.socket.send(data)
    }
  }

  sendUpdate(update: Uint8Array) {
    this.send(
      frame(this.#prefix, (encoder) => {
        encoding.writeVarUint(encoder, 0)
        syncProtocol.writeUpdate(encoder, update)
      })
    )
  }

  sendAwareness(clientId: number, clock: number, state: unknown) {
    this.send(
      frame(this.#prefix, (encoder) => {
        encoding.writeVarUint(encoder, 1)
        const inner = encoding.createEncoder()
        encoding.writeVarUint(inner, 1)
        encoding.writeVarUint(inner, clientId)
        encoding.writeVarUint(inner, clock)
        encoding.writeVarString(inner, JSON.stringify(state))
        encoding.writeVarUint8Array(encoder, encoding.toUint8Array(inner))
      })
    )
  }

  connect(): Promise<void> {
    const path =
      this.#server.kind === 'hocuspocus'
        ? '/'
        : `/collaboration/${this.#docName}?token=${signCollabToken(
            { userId: 'bench', docName: this.#docName },
            'bench-secret',
            3600
          )}`
    this.socket = new WebSocket(`ws://127.0.0.1:${this.#server.port}${path}`, {
      perMessageDeflate: false,
    })
    this.socket.binaryType = 'nodebuffer'
    let resolveSynced!: () => void
    this.synced = new Promise((resolve) => (resolveSynced = resolve))
    this.socket.on('message', (data: Buffer) => {
      const decoder = decoding.createDecoder(
        new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      )
      if (this.#prefix !== null) {
        decoding.readVarString(decoder)
      }
      const type = decoding.readVarUint(decoder)
      if (type === 0 || type === 4) {
        const syncType = decoding.readVarUint(decoder)
        if (syncType === 0) {
          const stateVector = decoding.readVarUint8Array(decoder)
          this.send(
            frame(this.#prefix, (encoder) => {
              encoding.writeVarUint(encoder, 0)
              syncProtocol.writeSyncStep2(encoder, this.doc, stateVector)
            })
          )
        } else {
          const update = decoding.readVarUint8Array(decoder)
          if (syncType === 1) {
            Y.applyUpdate(this.doc, update, this)
            resolveSynced()
          } else if (this.#options.observe) {
            Y.applyUpdate(this.doc, update, this)
            this.#options.onUpdate?.(this.doc)
          }
        }
      }
    })
    this.doc.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin !== this) {
        this.sendUpdate(update)
      }
    })
    return new Promise((resolve, reject) => {
      this.socket.once('open', () => {
        if (this.#prefix !== null) {
          this.send(
            frame(this.#prefix, (encoder) => {
              encoding.writeVarUint(encoder, 2)
              encoding.writeVarUint(encoder, 0)
              encoding.writeVarString(encoder, 'token')
            })
          )
        }
        this.send(
          frame(this.#prefix, (encoder) => {
            encoding.writeVarUint(encoder, 0)
            syncProtocol.writeSyncStep1(encoder, this.doc)
          })
        )
        resolve()
      })
      this.socket.once('error', reject)
    })
  }

  close() {
    this.socket?.terminate()
    this.doc.destroy()
  }
}

/**
 * Connects `count` clients in batches so the accept queue never overflows.
 */
export async function connectMany(
  server: RunningServer,
  count: number,
  docNameOf: (index: number) => string,
  optionsOf: (index: number) => ClientOptions = () => ({})
) {
  const clients: BenchClient[] = []
  for (let index = 0; index < count; index += 50) {
    const batch = Array.from(
      { length: Math.min(50, count - index) },
      (_, offset) => new BenchClient(server, docNameOf(index + offset), optionsOf(index + offset))
    )
    await Promise.all(batch.map((client) => client.connect()))
    await Promise.all(batch.map((client) => client.synced))
    clients.push(...batch)
  }
  return clients
}

export const now = () => performance.now()
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
