/**
 * Proves the benchmark's Hocuspocus client speaks `@hocuspocus/provider`'s
 * wire byte for byte: a recording WebSocket server receives the frames of a
 * real provider and of a `BenchClient`, each with the same client id, going
 * through the same exchange (open, the server's sync step 1, one map write).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'
import * as syncProtocol from 'y-protocols/sync'
import { WebSocket, WebSocketServer } from 'ws'
import { BenchClient, type RunningServer } from './harness.ts'

const DOC_NAME = 'wire-check'
const CLIENT_ID = 4242
/** auth, sync step 1, awareness, sync step 2 (the answer to the server's step 1), one update */
const EXPECTED_FRAMES = 5

interface Recorder {
  port: number
  /** Frames of the next connection, once it has sent EXPECTED_FRAMES */
  next(write: () => void): Promise<Buffer[]>
  close(): Promise<void>
}

async function recorder(): Promise<Recorder> {
  const http = createServer()
  const wss = new WebSocketServer({ server: http })
  let waiting: ((socket: WebSocket) => void) | undefined
  wss.on('connection', (socket) => waiting?.(socket))
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    port: (http.address() as AddressInfo).port,
    next(write) {
      return new Promise((resolve) => {
        waiting = (socket) => {
          // one connection per call: a reconnecting provider is not recorded
          waiting = undefined
          const frames: Buffer[] = []
          socket.on('message', (data: Buffer) => {
            if (frames.length === EXPECTED_FRAMES) {
              return
            }
            frames.push(Buffer.from(data))
            if (frames.length === 3) {
              const encoder = encoding.createEncoder()
              encoding.writeVarString(encoder, DOC_NAME)
              encoding.writeVarUint(encoder, 0)
              syncProtocol.writeSyncStep1(encoder, new Y.Doc())
              socket.send(encoding.toUint8Array(encoder))
            } else if (frames.length === 4) {
              write()
            } else if (frames.length === EXPECTED_FRAMES) {
              socket.close()
              resolve(frames)
            }
          })
        }
      })
    },
    async close() {
      wss.close()
      await new Promise((resolve) => http.close(resolve))
    },
  }
}

/**
 * Resolves with the number of frames compared; rejects naming the first
 * frame that differs.
 */
export async function checkHocuspocusWire(): Promise<number> {
  const { HocuspocusProvider, HocuspocusProviderWebsocket } = await import('@hocuspocus/provider')
  const server = await recorder()
  try {
    const providerDoc = new Y.Doc()
    providerDoc.clientID = CLIENT_ID
    // the provider's socket as its docs set it up for Node: ws as the WebSocket
    const providerFrames = server.next(() => providerDoc.getMap('m').set('w0', 1))
    const socket = new HocuspocusProviderWebsocket({
      url: `ws://127.0.0.1:${server.port}`,
      WebSocketPolyfill: WebSocket,
    })
    const provider = new HocuspocusProvider({
      websocketProvider: socket,
      name: DOC_NAME,
      token: 'token',
      document: providerDoc,
    })
    provider.attach()
    const expected = await providerFrames
    provider.destroy()
    socket.destroy()

    const client = new BenchClient(
      { kind: 'hocuspocus', port: server.port } as RunningServer,
      DOC_NAME
    )
    client.doc.clientID = CLIENT_ID
    const clientFrames = server.next(() => client.doc.getMap('m').set('w0', 1))
    await client.connect()
    const actual = await clientFrames
    client.close()

    if (actual.length !== expected.length) {
      throw new Error(
        `Hocuspocus wire check: ${actual.length} frames, the provider sent ${expected.length}`
      )
    }
    expected.forEach((frame, index) => {
      if (!frame.equals(actual[index])) {
        throw new Error(
          `Hocuspocus wire check: frame ${index + 1} differs from @hocuspocus/provider's ` +
            `(${frame.toString('hex')} vs ${actual[index]?.toString('hex')})`
        )
      }
    })
    return expected.length
  } finally {
    await server.close()
  }
}
