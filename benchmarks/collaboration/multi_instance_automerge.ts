/**
 * The Automerge engine across two Atrium instances sharing documents through
 * Redis (multiInstance): unmodified automerge-repo clients on one document,
 * writers and observers split between the instances. Each delivery is
 * counted as same-instance or cross-instance, so both figures come from the
 * same run under the same load. The clients all run in this process (an
 * automerge-repo client costs far more CPU than a y-websocket one), so the
 * scenario is smaller than the Yjs one: 10 writers at 1 change/s each.
 * One warm-up round (not printed), then three repeats.
 * `AUTOMERGE_TRACE=1` also prints where deliveries wait: each value's
 * landing in the writer's instance and in the observer's, and the observer's
 * instance's first socket write after it (traced inside the instances), so a
 * delivery splits into client to instance, the Redis hop (cross-instance
 * only), the repo's sync throttle (landing to send) and send to observer
 * (the socket and the observer's own processing, in this process).
 *
 * npm run bench -- collaboration multi_instance
 */
import { fork, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { Repo, type DocHandle, type PeerId } from '@automerge/automerge-repo'
import { WebSocketClientAdapter } from '@automerge/automerge-repo-network-websocket'
import { automergeDocumentId } from '../../src/collaboration/engines/automerge/document_id.ts'
import { signCollabToken } from '../../src/collaboration/tokens.ts'
import { childAsker } from './lib/child_asker.ts'

const WRITERS = 10
const OBSERVERS_PER_INSTANCE = 2
/** `AUTOMERGE_WRITER_RATE=0.7` spaces changes 143 ms apart instead of the repo throttle's 100 */
const CHANGES_PER_WRITER_PER_SECOND = Number(process.env.AUTOMERGE_WRITER_RATE ?? 1)
const DURATION_MS = 6000
const WARMUP_MS = 1000
const REPEATS = 3
const TRACE = process.env.AUTOMERGE_TRACE === '1'

const entry = fileURLToPath(new URL('./lib/cluster_process.ts', import.meta.url))
const now = () => performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
let peers = 0

async function startInstance(prefix: string, directory: string) {
  const child = fork(entry, [prefix, directory, 'automerge'], {
    execArgv: ['--import=@poppinss/ts-exec'],
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
    child.once('exit', (code) => reject(new Error(`instance exited with ${code}`)))
  })
  const ask = childAsker(child)
  return { child, port, ask }
}

type Instance = Awaited<ReturnType<typeof startInstance>>

/** What an instance recorded: each value's landing, each write to its sockets (wall-clock ms) */
interface Traced {
  landed: Array<[key: string, value: number, at: number]>
  writes: number[]
}

/** One observed delivery: the writer's key and value, the observer's instance, when it arrived */
interface Delivery {
  key: string
  value: number
  instance: number
  at: number
}

async function connect(port: number, docName: string) {
  const peer = ++peers
  const token = signCollabToken({ userId: `bench-${peer}`, docName }, 'bench-secret', 3600)
  const adapter = new WebSocketClientAdapter(
    `ws://127.0.0.1:${port}/collaboration/${docName}?token=${token}`,
    1000
  )
  const connected = new Promise<void>((resolve) => adapter.once('peer-candidate', () => resolve()))
  const repo = new Repo({ network: [adapter], peerId: `bench-${peer}` as PeerId })
  await connected
  const handle = await repo.find<Record<string, number>>(automergeDocumentId(docName) as any)
  return { repo, handle }
}

function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

async function run(instances: Instance[], docName: string) {
  const ports = instances.map(({ port }) => port)
  const writers: Array<{ repo: Repo; handle: DocHandle<Record<string, number>> }> = []
  for (let index = 0; index < WRITERS; index++) {
    writers.push(await connect(ports[index % 2], docName))
  }
  const same: number[] = []
  const cross: number[] = []
  const deliveries: Delivery[] = []
  let measuring = false
  const observers: Repo[] = []
  for (let index = 0; index < OBSERVERS_PER_INSTANCE * 2; index++) {
    const instance = index % 2
    const { repo, handle } = await connect(ports[instance], docName)
    observers.push(repo)
    const seen = new Map<string, number>()
    handle.on('change', ({ doc }) => {
      const at = now()
      for (const [key, value] of Object.entries(doc)) {
        if (typeof value !== 'number' || seen.get(key) === value) {
          continue
        }
        seen.set(key, value)
        if (measuring) {
          ;(Number(key.slice(1)) % 2 === instance ? same : cross).push(at - value)
          deliveries.push({ key, value, instance, at })
        }
      }
    })
  }
  if (TRACE) {
    await Promise.all(
      instances.map((instance) =>
        instance.ask('trace', { docName, observers: OBSERVERS_PER_INSTANCE })
      )
    )
  }
  await sleep(500)
  const rate = WRITERS * CHANGES_PER_WRITER_PER_SECOND
  let sent = 0
  let cursor = 0
  const start = now()
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = now() - start
      measuring = elapsed >= WARMUP_MS
      const due = Math.floor((rate * elapsed) / 1000) - sent
      for (let index = 0; index < due; index++) {
        const key = `w${cursor}`
        writers[cursor].handle.change((doc) => {
          doc[key] = now()
        })
        cursor = (cursor + 1) % writers.length
        sent++
      }
      if (elapsed >= WARMUP_MS + DURATION_MS) {
        clearInterval(timer)
        resolve()
      }
    }, 5)
  })
  await sleep(1000)
  measuring = false
  await Promise.all(
    [...writers.map(({ repo }) => repo), ...observers].map((repo) =>
      repo.shutdown().catch(() => {})
    )
  )
  const traced = TRACE
    ? await Promise.all(instances.map((instance) => instance.ask('traced') as Promise<Traced>))
    : []
  return { same, cross, deliveries, traced }
}

/**
 * Splits each delivery at the value's landing in the writer's instance and
 * in the observer's (wall-clock times, so this process's `now()` is shifted
 * by its time origin): same-instance deliveries have two phases, cross-instance
 * ones three.
 */
function phases(deliveries: Delivery[], traced: Traced[]) {
  const toLocal = (at: number) => at - performance.timeOrigin
  const landedAt = traced.map(({ landed }) => {
    const byValue = new Map<string, number>()
    for (const [key, value, at] of landed) {
      byValue.set(`${key}:${value}`, toLocal(at))
    }
    return byValue
  })
  const writesOf = traced.map(({ writes }) => writes.map(toLocal).sort((a, b) => a - b))
  /** The instance's first write to an observer after `at`: the repo's throttled send */
  const sentAfter = (instance: number, at: number) =>
    writesOf[instance].find((written) => written >= at)
  const split: Record<string, number[]> = {}
  const add = (phase: string, value: number) => (split[phase] ??= []).push(value)
  for (const { key, value, instance, at } of deliveries) {
    const writerInstance = Number(key.slice(1)) % 2
    const atWriter = landedAt[writerInstance].get(`${key}:${value}`)
    const atObserver = landedAt[instance].get(`${key}:${value}`)
    const sent = atObserver === undefined ? undefined : sentAfter(instance, atObserver)
    if (atWriter === undefined || atObserver === undefined || sent === undefined) {
      continue
    }
    const kind = writerInstance === instance ? 'same' : 'cross'
    add(`${kind}: client to instance`, atWriter - value)
    if (kind === 'cross') {
      add('cross: Redis hop and apply', atObserver - atWriter)
    }
    add(`${kind}: throttle (land to send)`, sent - atObserver)
    add(`${kind}: send to observer`, at - sent)
  }
  return split
}

const prefix = `atrium:bench:cluster:${randomUUID()}:`
const directories = [
  await mkdtemp(join(tmpdir(), 'atrium-a-')),
  await mkdtemp(join(tmpdir(), 'atrium-b-')),
]
const started = await Promise.all(directories.map((directory) => startInstance(prefix, directory)))
const children: ChildProcess[] = started.map(({ child }) => child)

try {
  console.log(
    `Automerge: ${WRITERS} writers (${CHANGES_PER_WRITER_PER_SECOND} change/s each) on one document, half on each of two instances; ${OBSERVERS_PER_INSTANCE} observers per instance`
  )
  console.log(
    'repeat | same-instance p50 / p99 | cross-instance p50 / p99 | p99 difference | load (1 min)'
  )
  await run(started, 'typing-warm-up')
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    const { same, cross, deliveries, traced } = await run(started, `typing-${repeat}`)
    const figure = (values: number[], p: number) => percentile(values, p).toFixed(1)
    const difference = percentile(cross, 99) - percentile(same, 99)
    console.log(
      `${repeat}      | ${figure(same, 50)} / ${figure(same, 99)} ms (${same.length})`.padEnd(36) +
        ` | ${figure(cross, 50)} / ${figure(cross, 99)} ms (${cross.length})`.padEnd(30) +
        ` | ${difference >= 0 ? '+' : ''}${difference.toFixed(1)} ms | ${loadavg()[0].toFixed(2)}`
    )
    if (TRACE) {
      for (const [phase, values] of Object.entries(phases(deliveries, traced))) {
        console.log(
          `         ${phase.padEnd(28)} p50 ${figure(values, 50)} / p90 ${figure(values, 90)} / p99 ${figure(values, 99)} ms (${values.length})`
        )
      }
    }
    await sleep(500)
  }
} finally {
  for (const child of children) {
    child.kill('SIGKILL')
  }
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
  const keys = await redis.keys(`${prefix}*`)
  if (keys.length) {
    await redis.del(...keys)
  }
  redis.disconnect()
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })))
}
