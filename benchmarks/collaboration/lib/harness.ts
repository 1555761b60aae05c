/**
 * Drives collaboration servers from the benchmark process: starts each in a
 * child process, and connects light protocol clients (the y-websocket wire
 * protocol, or `@hocuspocus/provider`'s: document-prefixed frames after its
 * auth message, checked byte for byte against the provider by `wire_check.ts`).
 * Writers only send; observers apply what they receive, so 100 clients in one
 * process can offer tens of thousands of updates per second.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { childAsker } from './child_asker.ts'
import { readFileSync } from 'node:fs'
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
  /** When the answer arrived (the benchmark's clock, ms) */
  at: number
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
  // COLLAB_CPU_PROF=atrium writes a CPU profile of that server per run into tmp/collab-profile
  const profile = (process.env.COLLAB_CPU_PROF ?? '').split(',').includes(kind)
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.COLLAB_CPU_PROF_DIR ?? 'tmp/collab-profile'}`]
    : []
  const child = fork(entry, [kind, mode], {
    execArgv: ['--import=@poppinss/ts-exec', '--expose-gc', ...profile],
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
  const ask = childAsker(child)
  return {
    kind,
    port,
    child,
    async stats() {
      const message = await ask('stats')
      return { ...message, at: performance.now() }
    },
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.send({ cmd: 'exit' })
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
      await exited
      clearTimeout(timer)
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

/** The version `@hocuspocus/provider` writes after the token of its auth message */
export const PROVIDER_VERSION = readVersion('@hocuspocus/provider')

/** The installed version of a package, read from its package.json */
export function readVersion(name: string): string {
  const path = fileURLToPath(new URL(`../../../node_modules/${name}/package.json`, import.meta.url))
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version
}

export interface AwarenessEntry {
  clientId: number
  clock: number
  state: string
}

export interface ClientOptions {
  /** Applies incoming updates to a Y.Doc (observers); writers only send */
  observe?: boolean
  onUpdate?: (doc: Y.Doc) => void
  /** Called with every awareness entry received */
  onAwareness?: (entry: AwarenessEntry) => void
  /** The token's user; each client is its own user by default */
  userId?: string
}

let nextUser = 0

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

  #readAwareness(decoder: decoding.Decoder) {
    const onAwareness = this.#options.onAwareness
    if (!onAwareness) {
      return
    }
    const inner = decoding.createDecoder(decoding.readVarUint8Array(decoder))
    const count = decoding.readVarUint(inner)
    for (let index = 0; index < count; index++) {
      const clientId = decoding.readVarUint(inner)
      const clock = decoding.readVarUint(inner)
      onAwareness({ clientId, clock, state: decoding.readVarString(inner) })
    }
  }

  /**
   * What a provider sends when its socket opens. Hocuspocus: the auth message
   * (token, then the provider's version), sync step 1, and the awareness of
   * the local state (`{}`), as `@hocuspocus/provider` does. y-websocket: sync
   * step 1.
   */
  openingFrames(): Uint8Array[] {
    const step1 = frame(this.#prefix, (encoder) => {
      encoding.writeVarUint(encoder, 0)
      syncProtocol.writeSyncStep1(encoder, this.doc)
    })
    if (this.#prefix === null) {
      return [step1]
    }
    const auth = frame(this.#prefix, (encoder) => {
      encoding.writeVarUint(encoder, 2)
      encoding.writeVarUint(encoder, 0)
      encoding.writeVarString(encoder, 'token')
      encoding.writeVarString(encoder, PROVIDER_VERSION)
    })
    const awareness = frame(this.#prefix, (encoder) => {
      encoding.writeVarUint(encoder, 1)
      const inner = encoding.createEncoder()
      encoding.writeVarUint(inner, 1)
      encoding.writeVarUint(inner, this.doc.clientID)
      encoding.writeVarUint(inner, 0)
      encoding.writeVarString(inner, '{}')
      encoding.writeVarUint8Array(encoder, encoding.toUint8Array(inner))
    })
    return [auth, step1, awareness]
  }

  connect(): Promise<void> {
    const path =
      this.#server.kind === 'hocuspocus'
        ? '/'
        : `/collaboration/${this.#docName}?token=${signCollabToken(
            { userId: this.#options.userId ?? `bench-${++nextUser}`, docName: this.#docName },
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
      if (type === 1) {
        this.#readAwareness(decoder)
      }
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
        for (const opening of this.openingFrames()) {
          this.send(opening)
        }
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
