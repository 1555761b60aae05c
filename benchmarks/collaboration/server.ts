/**
 * Atrium's collaboration server against @y/websocket-server and
 * @hocuspocus/server, same load on loopback, each server in its own process,
 * every scenario repeated `COLLAB_REPEATS` (3) times, interleaved.
 * `COLLAB_BENCH=hot,typing,docs,memory,awareness,sync` picks scenarios,
 * `COLLAB_SERVERS=atrium,hocuspocus` the servers.
 */
import { readdir } from 'node:fs/promises'
import * as Y from 'yjs'
import { STARTUP, summarizeProfile } from './lib/profile.ts'
import { closeAll, drive } from './lib/drive.ts'
import { figure, percentile } from '../lib/report.ts'
import { printResults, record, startRun } from './lib/results.ts'
import { checkHocuspocusWire } from './lib/wire_check.ts'
import {
  SERVER_KINDS,
  connectMany,
  now,
  sleep,
  startServer,
  type RunningServer,
  type ServerKind,
  type ServerStats,
} from './lib/harness.ts'

const selected = new Set(
  (process.env.COLLAB_BENCH ?? 'hot,typing,docs,memory,awareness,sync').split(',')
)
const repeats = Number(process.env.COLLAB_REPEATS ?? 3)
const kinds = SERVER_KINDS.filter((kind) =>
  (process.env.COLLAB_SERVERS ?? SERVER_KINDS.join(',')).split(',').includes(kind)
)

async function withServer<T>(
  kind: ServerKind,
  run: (server: RunningServer) => Promise<T>,
  mode = 'storage'
) {
  const load = startRun()
  console.log(`  [${kind}, load ${load.toFixed(2)}]`)
  const server = await startServer(kind, mode)
  try {
    return await run(server)
  } finally {
    await server.stop()
  }
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
    let cpuAtBest = 0
    for (const rate of RAMP) {
      const before = await server.stats()
      const { latencies, achieved } = await drive(clients, clients.slice(0, 5), rate, 2000)
      const after = await server.stats()
      const cpu = cpuPercent(before, after)
      const p99 = percentile(latencies, 99)
      const open = clients.filter((client) => client.socket.readyState === 1).length
      console.log(
        `  ${kind.padEnd(12)} ${String(rate).padStart(6)} updates/s offered: p99 ${figure(p99, ' ms')}, achieved ${figure(achieved)}, server CPU ${figure(cpu, '%')}, ${open} clients connected`
      )
      if (!(p99 <= 100) || achieved < rate * 0.9 || open < clients.length) {
        if (achieved < rate * 0.9) {
          console.log(`  ${kind.padEnd(12)} stopped: the clients could not offer ${rate}/s`)
        }
        break
      }
      cpuAtBest = cpu
      best = achieved
      await sleep(300)
    }
    await sleep(300)
    // server CPU per update at one fixed offered rate: what the ramp's outcome
    // rests on, and far less sensitive than latency to other load on the machine
    const before = await server.stats()
    const fixed = await drive(clients, clients.slice(0, 5), FIXED_RATE, 3000)
    const after = await server.stats()
    const cpuMicros = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system
    // a server that dropped clients did less work: no figure then
    const connected = clients.every((client) => client.socket.readyState === 1)
    const perUpdate = connected ? cpuMicros / fixed.sent : Number.NaN
    console.log(
      `  ${kind.padEnd(12)} ${FIXED_RATE} updates/s offered (achieved ${figure(fixed.achieved)}): ${figure(perUpdate, ' µs')} server CPU per update${connected ? '' : ' (clients were disconnected: no figure)'}`
    )
    record(
      `hot doc at ${FIXED_RATE.toLocaleString('en-US')}/s offered: server CPU µs per update`,
      kind,
      perUpdate,
      'lower'
    )
    record(
      'hot doc: updates/s one core of server CPU sustains (1e6 / µs per update)',
      kind,
      1e6 / perUpdate,
      'higher'
    )
    closeAll(clients)
    record('hot doc, 100 writers: updates/s before p99 > 100 ms', kind, best, 'higher')
    record('hot doc: server CPU (%) at that rate', kind, cpuAtBest, 'lower')
  })
}

/** Offered rate of the fixed-rate CPU measure, updates/s */
const FIXED_RATE = 3200
/** Offered rates of the hot-document ramp, updates/s */
const RAMP = [400, 800, 1600, 2400, 3200, 4800, 6400, 8000, 9600, 11_200, 12_800, 16_000, 19_200]

function cpuPercent(before: ServerStats, after: ServerStats) {
  const used = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system
  return (used / 1000 / (after.at - before.at)) * 100
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
    const latencies: number[] = []
    let measuring = false
    // 10 observers time every state they receive (each state carries its send time)
    const clients = await connectMany(
      server,
      100,
      () => 'presence',
      (index) =>
        index < 10
          ? {
              onAwareness: ({ state }) => {
                if (measuring && state !== 'null') {
                  const sent = (JSON.parse(state) as { t?: number }).t
                  if (typeof sent === 'number') {
                    latencies.push(now() - sent)
                  }
                }
              },
            }
          : {}
    )
    measuring = true
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
              t: now(),
            }),
          (index * 10) % 1000
        )
      )
      await sleep(Math.max(0, 1000 - (now() - tick)))
    }
    await sleep(200)
    measuring = false
    const end = await server.stats()
    closeAll(clients)
    record(
      'awareness 1 Hz from 100 clients: delivery p50 (ms)',
      kind,
      percentile(latencies, 50),
      'lower'
    )
    record(
      'awareness 1 Hz from 100 clients: delivery p99 (ms)',
      kind,
      percentile(latencies, 99),
      'lower'
    )
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

if (kinds.includes('hocuspocus')) {
  const frames = await checkHocuspocusWire()
  console.log(
    `Hocuspocus client: ${frames} frames byte for byte identical to @hocuspocus/provider's`
  )
}

/** Runs a scenario `repeats` times, the servers interleaved: A, H, Y, A, H, Y, ... */
async function interleaved(run: (kind: ServerKind) => Promise<void>) {
  for (let repeat = 1; repeat <= repeats; repeat++) {
    console.log(` repeat ${repeat}/${repeats}`)
    for (const kind of kinds) {
      await run(kind)
    }
  }
}

/**
 * `COLLAB_BENCH=profile`: Atrium under the hot-document load at a fixed rate
 * (`COLLAB_PROFILE_RATE`, 6,400/s), profiled, its CPU time split by stage.
 */
async function profileHot() {
  const rate = Number(process.env.COLLAB_PROFILE_RATE ?? 6400)
  const directory = `tmp/collab-profile-${process.pid}`
  process.env.COLLAB_CPU_PROF = 'atrium'
  process.env.COLLAB_CPU_PROF_DIR = directory
  await withServer('atrium', async (server) => {
    const clients = await connectMany(
      server,
      100,
      () => 'hot',
      (index) => ({ observe: index < 5 })
    )
    const { latencies, achieved } = await drive(clients, clients.slice(0, 5), rate, 8000)
    console.log(
      `  atrium ${rate} updates/s offered for 8 s: p99 ${figure(percentile(latencies, 99), ' ms')}, achieved ${figure(achieved)}`
    )
    closeAll(clients)
  })
  const entries = await readdir(directory)
  const files = entries.filter((file) => file.endsWith('.cpuprofile'))
  const main = files.sort()[0]
  const { busyMs, stages } = summarizeProfile(`${directory}/${main}`)
  console.log(
    `\nAtrium server CPU by stage (${figure(busyMs)} ms busy after start-up, profile ${directory}/${main}):`
  )
  for (const [stage, micros] of stages) {
    if (stage !== 'idle' && stage !== STARTUP) {
      console.log(`  ${((micros / 1000 / busyMs) * 100).toFixed(1).padStart(5)}%  ${stage}`)
    }
  }
}

if (selected.has('profile')) {
  console.log('\nProfile of Atrium on one hot document, 100 writers:')
  await profileHot()
}
if (selected.has('hot')) {
  console.log('\nOne hot document, 100 writing clients, offered rate stepped up:')
  await interleaved(hotDocument)
}
if (selected.has('typing')) {
  for (const count of [10, 100, 300]) {
    console.log(`\n${count} typing clients on one document:`)
    await interleaved((kind) => typing(kind, count))
  }
}
if (selected.has('docs')) {
  console.log('\n300 typing clients over 100 documents:')
  await interleaved((kind) => typing(kind, 300, 100))
}
if (selected.has('memory')) {
  console.log('\nMemory:')
  await interleaved(memory)
}
if (selected.has('awareness')) {
  console.log('\nAwareness at 1 Hz from 100 clients:')
  await interleaved(awareness)
}
if (selected.has('sync')) {
  const state = bigDocument()
  console.log(`\nLarge document: ${figure(state.byteLength / 1024, ' KB')} of state`)
  await interleaved((kind) => syncLarge(kind, state))
}

printResults()
process.exit(0)
