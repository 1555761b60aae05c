/**
 * One hostile client, in its own process so its work does not slow the
 * measuring process: `updates` floods small Yjs updates as a writer;
 * `awareness` sends a 300,000-entry awareness frame then 100 awareness
 * queries as a read-only viewer that never reads. Each reconnects as soon as
 * the server closes it (10 times a second while its handshakes are refused), until `duration` ms pass, then prints one JSON line:
 * connections, messages sent, and the close codes received. Everything it
 * sends is prepared first and `READY` printed, so the measured phase times
 * the server, not this process's start-up or Yjs encoding.
 */
import * as Y from 'yjs'
import * as encoding from 'lib0/encoding'
import { WebSocket } from 'ws'
import { signCollabToken } from '../../../src/collaboration/tokens.ts'

const [port, kind, duration] = [process.argv[2], process.argv[3], Number(process.argv[4])]
const docName = 'bench/hostile'
let until = 0
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

/**
 * Sets of update messages, one per connection (each from its own Y.Doc, as a
 * new client would send), prepared before the attack; reused when exhausted.
 */
const updateSets: Uint8Array[][] = []
if (kind === 'updates') {
  for (let set = 0; set < 12; set++) {
    const doc = new Y.Doc()
    const messages: Uint8Array[] = []
    doc.on('update', (update: Uint8Array) => {
      messages.push(
        message(0, (encoder) => {
          encoding.writeVarUint(encoder, 2)
          encoding.writeVarUint8Array(encoder, update)
        })
      )
    })
    const text = doc.getText('content')
    for (let index = 0; index < 2000; index++) {
      text.insert(text.length, 'x')
    }
    updateSets.push(messages)
  }
}
let nextSet = 0
function nextUpdateSet() {
  return updateSets[nextSet++ % updateSets.length]
}
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
    let refusedWith: number | undefined
    socket.on('unexpected-response', (_request, response) => {
      refusedWith = response.statusCode
      response.resume()
      socket.terminate()
    })
    socket.on('close', (code) => {
      const key = refusedWith ? `http ${refusedWith}` : String(code)
      closes[key] = (closes[key] ?? 0) + 1
      // a refused handshake is retried 10 times a second: a flood of handshakes
      // is an HTTP rate limiter's job, not the WebSocket server's
      if (refusedWith) setTimeout(resolve, 100)
      else resolve()
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
      const messages = nextUpdateSet()
      let position = 0
      const burst = () => {
        if (socket.readyState !== 1 || Date.now() > until) {
          return
        }
        for (const end = Math.min(position + 500, messages.length); position < end; position++) {
          socket.send(messages[position])
          sent++
        }
        if (position < messages.length) setImmediate(burst)
      }
      burst()
    })
    const stop = setTimeout(() => socket.terminate(), Math.max(0, until - Date.now()))
    socket.once('close', () => clearTimeout(stop))
  })
}

process.stdout.write('READY\n')
until = Date.now() + duration
while (Date.now() < until) {
  await connectOnce()
}
process.stdout.write(`${JSON.stringify({ kind, connections, sent, closes })}\n`)
process.exit(0)
