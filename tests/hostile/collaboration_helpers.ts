import { connect, type Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import * as encoding from 'lib0/encoding'
import { WebSocket } from 'ws'
import { getActiveTest } from '@japa/runner'
import { setupApp } from '../helpers.ts'
import { defineConfig } from '../../src/collaboration/define_config.ts'
import type { CollaborationConfigInput } from '../../src/collaboration/types.ts'
import type { CollaborationManager } from '../../src/collaboration/manager.ts'
import { SECRET, allow } from '../collaboration/helpers.ts'

/**
 * An app with the collaboration provider and a bystander route, `GET /bystander`,
 * to prove the process still serves HTTP while clients attack the socket path.
 */
export async function setupHostileApp(
  config: CollaborationConfigInput<any> = {},
  options: { database?: boolean } = {}
) {
  const testApp = await setupApp({
    providers: [() => import('../../providers/collaboration_provider.ts')],
    database: options.database,
    routes: (router: any) => {
      router.get('/bystander', () => 'still here')
    },
    config: {
      collaboration: defineConfig({
        tokenSecret: SECRET,
        debounce: 100,
        authorize: () => allow,
        ...config,
      }),
    },
  })
  const manager = (await testApp.app.container.make('atrium.collaboration')) as CollaborationManager
  const { port } = new URL(testApp.url)
  return {
    ...testApp,
    manager,
    port: Number(port),
    wsBase: `${testApp.url.replace('http', 'ws')}/collaboration`,
    /** The bystander route's body: throws when the app no longer answers */
    bystander: async () => {
      const response = await fetch(`${testApp.url}/bystander`)
      return `${response.status} ${await response.text()}`
    },
  }
}

/**
 * Opens a raw socket and resolves with the HTTP status of a refused upgrade
 * (101 when it was accepted).
 */
export function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url)
    socket.on('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0)
      response.resume()
      socket.terminate()
    })
    socket.on('open', () => {
      resolve(101)
      socket.terminate()
    })
    socket.on('error', (error) => {
      if (!String(error.message).includes('Unexpected server response')) {
        reject(error)
      }
    })
  })
}

/**
 * A client WebSocket frame built by hand: masked unless told otherwise, with
 * a length header that may lie about the payload.
 */
export function wsFrame(
  payload: Uint8Array,
  options: { opcode?: number; mask?: boolean; declaredLength?: number; fin?: boolean } = {}
): Buffer {
  const { opcode = 2, mask = true, fin = true } = options
  const length = options.declaredLength ?? payload.byteLength
  const header: number[] = [(fin ? 0x80 : 0) | opcode]
  const maskBit = mask ? 0x80 : 0
  if (length < 126) {
    header.push(maskBit | length)
  } else if (length < 65536) {
    header.push(maskBit | 126, length >> 8, length & 0xff)
  } else {
    const big = Buffer.alloc(8)
    big.writeBigUInt64BE(BigInt(length))
    header.push(maskBit | 127, ...big)
  }
  if (!mask) {
    return Buffer.concat([Buffer.from(header), payload])
  }
  const key = randomBytes(4)
  const masked = Buffer.from(payload)
  for (let index = 0; index < masked.length; index++) {
    masked[index] ^= key[index % 4]
  }
  return Buffer.concat([Buffer.from(header), key, masked])
}

export interface RawConnection {
  socket: Socket
  /** HTTP status of the upgrade answer */
  status: number
  /** Everything received after the HTTP head */
  received: () => Buffer
  /** Resolves when the server closed or reset the TCP connection */
  ended: Promise<void>
}

/**
 * A WebSocket handshake over a bare TCP socket, so a test can send what no
 * WebSocket library would (unmasked frames, lying lengths, bytes before the
 * upgrade completes). `after` is written right after the request.
 */
export function rawUpgrade(port: number, path: string, after?: Buffer): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let head = Buffer.alloc(0)
    let body = Buffer.alloc(0)
    let status = 0
    const ended = new Promise<void>((done) => {
      socket.on('close', () => done())
    })
    socket.on('error', () => {})
    getActiveTest()?.cleanup(() => {
      socket.destroy()
    })
    socket.on('data', (chunk) => {
      if (status) {
        body = Buffer.concat([body, chunk])
        return
      }
      head = Buffer.concat([head, chunk])
      const end = head.indexOf('\r\n\r\n')
      if (end === -1) {
        return
      }
      status = Number(head.subarray(0, end).toString().split(' ')[1])
      body = head.subarray(end + 4)
      resolve({ socket, status, received: () => body, ended })
    })
    socket.on('close', () => {
      if (!status) {
        reject(new Error(`the server closed ${path} without an HTTP answer`))
      }
    })
    // an upgrade nobody answers would otherwise hang the test (and the server's close)
    const timer = setTimeout(() => {
      if (!status) {
        socket.destroy()
        reject(new Error(`no HTTP answer to the upgrade of ${path} within 5 s`))
      }
    }, 5000)
    socket.once('data', () => clearTimeout(timer))
    socket.once('close', () => clearTimeout(timer))
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`
    )
    if (after) {
      socket.write(after)
    }
  })
}

/**
 * The close code of the first close frame in what the server sent, or null.
 */
export function serverCloseCode(data: Buffer): number | null {
  let offset = 0
  while (offset + 2 <= data.length) {
    const opcode = data[offset] & 0x0f
    let length = data[offset + 1] & 0x7f
    let start = offset + 2
    if (length === 126) {
      length = data.readUInt16BE(start)
      start += 2
    } else if (length === 127) {
      length = Number(data.readBigUInt64BE(start))
      start += 8
    }
    if (opcode === 8) {
      return length >= 2 ? data.readUInt16BE(start) : 1005
    }
    offset = start + length
  }
  return null
}

/**
 * A protocol-level client (ws, no Yjs provider) that records its close.
 */
export function rawClient(url: string) {
  const socket = new WebSocket(url)
  const messages: Buffer[] = []
  socket.on('message', (data) => messages.push(data as Buffer))
  socket.on('error', () => {})
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('unexpected-response', () => reject(new Error('upgrade refused')))
  })
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }))
  )
  getActiveTest()?.cleanup(() => {
    socket.terminate()
  })
  return { socket, messages, opened, closed }
}

/** A y-protocols message: a type, then what `write` adds */
export function message(type: number, write: (encoder: encoding.Encoder) => void) {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, type)
  write(encoder)
  return encoding.toUint8Array(encoder)
}

/** An awareness message (type 1) of `[clientId, clock, stateJson]` entries */
export function awarenessMessage(entries: [number, number, string][]) {
  return message(1, (encoder) => {
    const inner = encoding.createEncoder()
    encoding.writeVarUint(inner, entries.length)
    for (const [clientId, clock, state] of entries) {
      encoding.writeVarUint(inner, clientId)
      encoding.writeVarUint(inner, clock)
      encoding.writeVarString(inner, state)
    }
    encoding.writeVarUint8Array(encoder, encoding.toUint8Array(inner))
  })
}

/** A sync update message (type 0, sub-type 2) carrying `update` */
export function updateMessage(update: Uint8Array) {
  return message(0, (encoder) => {
    encoding.writeVarUint(encoder, 2)
    encoding.writeVarUint8Array(encoder, update)
  })
}
