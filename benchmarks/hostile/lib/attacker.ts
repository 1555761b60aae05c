/**
 * One hostile client, in its own process so its work does not slow the
 * measuring process: `updates` floods small Yjs updates as a writer;
 * `awareness` sends a 300,000-entry awareness frame then 100 awareness
 * queries as a read-only viewer that never reads. Each reconnects as soon as
 * the server closes it, until `duration` ms pass, then prints one JSON line:
 * connections, messages sent, and the close codes received.
 */
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'
import { WebSocket } from 'ws'
import { signCollabToken } from '../../../src/collaboration/tokens.ts'

const [port, kind, duration] = [process.argv[2], process.argv[3], Number(process.argv[4])]
const docName = 'bench/hostile'
const until = Date.now() + duration
const closes: Record<string, number> = {}
let connections = 0
let sent = 0

function message(type: number, write: (encoder: encoding.Encoder) => void) {
  const encoder = encoding.createEncoder()
  encoding.writeVarUint(encoder, type)
  write(encoder)
  return encoding.toUint8Array(encoder)
}

/** 300,000 awareness entries: about 9.9 MB, as in the report */
function hugeAwareness() {
  const inner = encoding.createEncoder()
  encoding.writeVarUint(inner, 300_000)
  for (let index = 0; index < 300_000; index++) {
    encoding.writeVarUint(inner, 10_000 + index)
    encoding.writeVarUint(inner, 1)
    encoding.writeVarString(inner, '{"user":{"name":"x"}}')
  }
  return message(1, (encoder) => encoding.writeVarUint8Array(encoder, encoding.toUint8Array(inner)))
}

const awarenessFrame = kind === 'awareness' ? hugeAwareness() : new Uint8Array()
const query = message(3, () => {})

function connectOnce(): Promise<void> {
  return new Promise((resolve) => {
    connections++
    const userId = kind === 'awareness' ? 'viewer' : 'flooder'
    const token = signCollabToken({ userId, docName }, 'bench-secret', 3600)
    const socket = new WebSocket(`ws://127.0.0.1:${port}/collaboration/${docName}?token=${token}`, {
      perMessageDeflate: false,
    })
    socket.on('error', () => {})
    socket.on('close', (code) => {
      closes[code] = (closes[code] ?? 0) + 1
      resolve()
    })
    socket.on('open', () => {
      if (kind === 'awareness') {
        // a viewer that never reads what the server sends
        socket.pause()
        socket.send(awarenessFrame)
        for (let index = 0; index < 100; index++) {
          socket.send(query)
        }
        sent += 101
        // reads again after the server's 1 s close grace, only to learn how it was closed
        setTimeout(() => socket.resume(), 1500)
        return
      }
      const doc = new Y.Doc()
      const text = doc.getText('content')
      doc.on('update', (update: Uint8Array) => {
        socket.send(
          message(0, (encoder) => {
            encoding.writeVarUint(encoder, 2)
            encoding.writeVarUint8Array(encoder, update)
          })
        )
        sent++
      })
      const burst = () => {
        if (socket.readyState !== 1 || Date.now() > until) {
          return
        }
        for (let index = 0; index < 500; index++) {
          text.insert(text.length, 'x')
        }
        setImmediate(burst)
      }
      burst()
    })
    const stop = setTimeout(() => socket.terminate(), Math.max(0, until - Date.now()))
    socket.once('close', () => clearTimeout(stop))
  })
}

while (Date.now() < until) {
  await connectOnce()
}
process.stdout.write(`${JSON.stringify({ kind, connections, sent, closes })}\n`)
process.exit(0)
