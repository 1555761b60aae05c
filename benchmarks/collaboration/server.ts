/**
 * Atrium's collaboration server against @y/websocket-server and
 * @hocuspocus/server, same load on loopback, each server in its own process.
 * `COLLAB_BENCH=hot,typing,docs,memory,awareness,sync` picks scenarios.
 */
import * as Y from 'yjs'
import { figure, percentile, printTable } from '../lib/report.ts'
import {
  SERVER_KINDS,
  connectMany,
  now,
  sleep,
  startServer,
  type BenchClient,
  type RunningServer,
  type ServerKind,
} from './lib/harness.ts'

const selected = new Set(
  (process.env.COLLAB_BENCH ?? 'hot,typing,docs,memory,awareness,sync').split(',')
)
type Results = Record<string, Partial<Record<ServerKind, number>>>
const results: Results = {}
const direction: Record<string, 'higher' | 'lower'> = {}

function record(name: string, kind: ServerKind, value: number, better: 'higher' | 'lower') {
  results[name] ??= {}
  results[name][kind] = value
  direction[name] = better
}

async function withServer<T>(
  kind: ServerKind,
  run: (server: RunningServer) => Promise<T>,
  mode = 'storage'
) {
  const server = await startServer(kind, mode)
  try {
    return await run(server)
  } finally {
    await server.stop()
  }
}

/**
 * Writers set their own map key to a timestamp; observers measure how long
 * each value took to arrive. Returns latencies (ms) and the achieved rate.
 */
async function drive(
  clients: BenchClient[],
  observers: BenchClient[],
  rate: number,
  durationMs: number,
  warmupMs = 500
) {
  const latencies: number[] = []
  let measuring = false
  const handlers = observers.map((observer) => {
    const map = observer.doc.getMap('m')
    const handler = (event: Y.YMapEvent<unknown>) => {
      if (!measuring) {
        return
      }
      const at = now()
      for (const key of event.keysChanged) {
        const value = map.get(key)
        if (typeof value === 'number') {
          latencies.push(at - value)
        }
      }
    }
    map.observe(handler)
    return () => map.unobserve(handler)
  })
  const keys = clients.map((_, index) => `w${index}`)
  let sent = 0
  let cursor = 0
  const start = now()
  let measuredSent = 0
  let measureStart = 0
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = now() - start
      if (!measuring && elapsed >= warmupMs) {
        measuring = true
        measureStart = now()
        measuredSent = sent
      }
      const due = Math.floor((rate * elapsed) / 1000) - sent
      for (let index = 0; index < due; index++) {
        const client = clients[cursor]
        client.doc.getMap('m').set(keys[cursor], now())
        cursor = (cursor + 1) % clients.length
        sent++
      }
      if (elapsed >= warmupMs + durationMs) {
        clearInterval(timer)
        resolve()
      }
    }, 5)
  })
  const achieved = ((sent - measuredSent) * 1000) / (now() - measureStart)
  await sleep(300)
  measuring = false
  handlers.forEach((off) => off())
  return { latencies, achieved }
}

function closeAll(clients: BenchClient[]) {
  clients.forEach((client) => client.close())
}

async function hotDocument(kind: ServerKind) {
  return withServer(kind, async (server) => {
    const clients = await connectMany(
      server,
      100,
      () => 'hot',
      (index) => ({ observe: index < 5 })
    )
    let best = 0
    for (const rate of [200, 400, 800, 1200, 1600, 2400, 3200, 4800, 6400, 8000, 9600, 12_800]) {
      const { latencies, achieved } = await drive(clients, clients.slice(0, 5), rate, 2000)
      const p99 = percentile(latencies, 99)
      console.log(
        `  ${kind.padEnd(12)} ${String(rate).padStart(6)} updates/s offered: p99 ${figure(p99, ' ms')}, achieved ${figure(achieved)}`
      )
      if (!(p99 <= 100) || achieved < rate * 0.9) {
        break
      }
      best = achieved
      await sleep(300)
    }
    closeAll(clients)
    record('hot doc, 100 writers: updates/s before p99 > 100 ms', kind, best, 'higher')
  })
}

async function typing(kind: ServerKind, count: number, docs = 1) {
  return withServer(kind, async (server) => {
    const clients = await connectMany(
      server,
      count,
      (index) => `typing-${index % docs}`,
      (index) => ({ observe: docs > 1 ? index < docs : index < 10 })
    )
    const observers = clients.filter((_, index) => (docs > 1 ? index < docs : index < 10))
    const { latencies } = await drive(clients, observers, count * 2, 4000)
    closeAll(clients)
    const name =
      docs > 1
        ? `${count} typing clients over ${docs} docs: delivery p99 (ms)`
        : `${count} typing clients on one doc: delivery p99 (ms)`
    record(name, kind, percentile(latencies, 99), 'lower')
  })
}

const heap = (stats: { heapUsed: number; external: number }) => stats.heapUsed + stats.external

async function memory(kind: ServerKind) {
  return withServer(
    kind,
    async (server) => {
      const first = await connectMany(server, 1, () => 'idle')
      const base = await server.stats()
      const idle = await connectMany(server, 300, () => 'idle')
      await sleep(300)
      const afterIdle = await server.stats()
      const perConnection = (heap(afterIdle) - heap(base)) / 300
      record('memory per idle connection (KB, heap + buffers)', kind, perConnection / 1024, 'lower')
      closeAll([...idle, ...first])
      await sleep(3000)

      const before = await server.stats()
      const docs = await connectMany(server, 100, (index) => `open-${index}`)
      for (const client of docs) {
        client.doc.getText('content').insert(0, 'x'.repeat(200))
      }
      await sleep(1000)
      const afterDocs = await server.stats()
      record(
        'memory per open doc (KB, heap + buffers, minus its connection)',
        kind,
        Math.max(0, (heap(afterDocs) - heap(before)) / 100 - perConnection) / 1024,
        'lower'
      )
      closeAll(docs)
      await sleep(3500)
      const afterLeave = await server.stats()
      record(
        'documents still open 3 s after every client left (of 100)',
        kind,
        afterLeave.openDocuments,
        'lower'
      )
    },
    'no-storage'
  )
}

async function awareness(kind: ServerKind) {
  return withServer(kind, async (server) => {
    const clients = await connectMany(server, 100, () => 'presence')
    const seconds = 8
    const start = await server.stats()
    for (let second = 0; second < seconds; second++) {
      const tick = now()
      clients.forEach((client, index) =>
        setTimeout(
          () =>
            client.sendAwareness(client.doc.clientID, second + 1, {
              user: { name: `User ${index}`, color: '#30bced' },
              cursor: { anchor: index * 3 + second, head: index * 3 + second + 2 },
            }),
          (index * 10) % 1000
        )
      )
      await sleep(Math.max(0, 1000 - (now() - tick)))
    }
    await sleep(200)
    const end = await server.stats()
    closeAll(clients)
    const cpuMs = (end.cpu.user + end.cpu.system - start.cpu.user - start.cpu.system) / 1000
    record(
      'awareness 1 Hz from 100 clients: server CPU (%)',
      kind,
      (cpuMs / (seconds * 1000)) * 100,
      'lower'
    )
  })
}

function bigDocument() {
  const doc = new Y.Doc()
  const text = doc.getText('content')
  let seed = 7
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
  while (Y.encodeStateAsUpdate(doc).byteLength < 1024 * 1024) {
    doc.transact(() => {
      for (let index = 0; index < 200; index++) {
        const position = Math.floor(random() * (text.length + 1))
        text.insert(position, 'lorem ipsum dolor sit amet '.slice(0, 5 + Math.floor(random() * 20)))
        if (random() < 0.3 && text.length > 40) {
          text.delete(Math.floor(random() * (text.length - 20)), 10)
        }
      }
    })
  }
  return Y.encodeStateAsUpdate(doc)
}

async function syncLarge(kind: ServerKind, state: Uint8Array) {
  return withServer(kind, async (server) => {
    const [writer] = await connectMany(server, 1, () => 'large')
    writer.sendUpdate(state)
    const expected = Y.encodeStateVector(((doc) => (Y.applyUpdate(doc, state), doc))(new Y.Doc()))
    for (;;) {
      const [probe] = await connectMany(server, 1, () => 'large')
      const ok = Buffer.from(Y.encodeStateVector(probe.doc)).equals(Buffer.from(expected))
      probe.close()
      if (ok) {
        break
      }
      await sleep(100)
    }
    const durations: number[] = []
    for (let run = 0; run < 7; run++) {
      const start = now()
      const [client] = await connectMany(server, 1, () => 'large')
      durations.push(now() - start)
      client.close()
    }
    writer.close()
    record(
      'new client syncing a 1 MB doc with long history: median (ms)',
      kind,
      percentile(durations, 50),
      'lower'
    )
  })
}

if (selected.has('hot')) {
  console.log('\nOne hot document, 100 writing clients, offered rate stepped up:')
  for (const kind of SERVER_KINDS) {
    await hotDocument(kind)
  }
}
if (selected.has('typing')) {
  for (const count of [10, 100, 300]) {
    for (const kind of SERVER_KINDS) {
      await typing(kind, count)
    }
  }
}
if (selected.has('docs')) {
  for (const kind of SERVER_KINDS) {
    await typing(kind, 300, 100)
  }
}
if (selected.has('memory')) {
  for (const kind of SERVER_KINDS) {
    await memory(kind)
  }
}
if (selected.has('awareness')) {
  for (const kind of SERVER_KINDS) {
    await awareness(kind)
  }
}
if (selected.has('sync')) {
  const state = bigDocument()
  console.log(`\nLarge document: ${figure(state.byteLength / 1024, ' KB')} of state`)
  for (const kind of SERVER_KINDS) {
    await syncLarge(kind, state)
  }
}

const ratio = (value?: number, anchor?: number) =>
  value === undefined || anchor === undefined || anchor === 0
    ? value === 0 && anchor === 0
      ? '1.00x'
      : 'n/a'
    : `${(value / anchor).toFixed(2)}x`

printTable(
  'Collaboration server: Atrium vs @y/websocket-server vs @hocuspocus/server (loopback)',
  Object.entries(results).map(([name, values]) => ({
    'figure': name,
    'better': direction[name],
    'atrium': figure(values.atrium ?? Number.NaN),
    'y-websocket': figure(values['y-websocket'] ?? Number.NaN),
    'hocuspocus': figure(values.hocuspocus ?? Number.NaN),
    'atrium / y-ws': ratio(values.atrium, values['y-websocket']),
    'atrium / hocus': ratio(values.atrium, values.hocuspocus),
  }))
)
process.exit(0)
