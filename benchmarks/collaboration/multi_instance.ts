/**
 * Two Atrium instances sharing documents through Redis (multiInstance):
 * 100 typing clients on one document, half on each instance, observers on
 * both. Each delivery is counted as same-instance (writer and observer on
 * one instance) or cross-instance (through Redis), so both figures come from
 * the same run under the same load. One warm-up round (not printed: the
 * instances' first second of JIT and connection set-up), then three repeats.
 *
 * npm run bench -- collaboration multi_instance
 */
import { fork, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type * as Y from 'yjs'
import { Redis } from 'ioredis'
import { BenchClient, type RunningServer } from './lib/harness.ts'

const WRITERS = 100
const OBSERVERS_PER_INSTANCE = 5
const UPDATES_PER_WRITER_PER_SECOND = 2
const DURATION_MS = 4000
const WARMUP_MS = 500
const REPEATS = 3

const entry = fileURLToPath(new URL('./lib/cluster_process.ts', import.meta.url))
const now = () => performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function startInstance(prefix: string, directory: string) {
  const child = fork(entry, [prefix, directory], {
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
  return { child, server: { kind: 'atrium', port } as RunningServer }
}

async function connect(server: RunningServer, docName: string, observe: boolean) {
  const client = new BenchClient(server, docName, { observe })
  await client.connect()
  await client.synced
  return client
}

function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

async function run(instances: RunningServer[], docName: string) {
  const writers: BenchClient[] = []
  for (let index = 0; index < WRITERS; index++) {
    writers.push(await connect(instances[index % 2], docName, false))
  }
  const observers: Array<{ client: BenchClient; instance: number }> = []
  for (let index = 0; index < OBSERVERS_PER_INSTANCE * 2; index++) {
    observers.push({
      client: await connect(instances[index % 2], docName, true),
      instance: index % 2,
    })
  }
  const same: number[] = []
  const cross: number[] = []
  let measuring = false
  for (const { client, instance } of observers) {
    const map = client.doc.getMap('m')
    map.observe((event: Y.YMapEvent<unknown>) => {
      if (!measuring) {
        return
      }
      const at = now()
      for (const key of event.keysChanged) {
        const value = map.get(key)
        if (typeof value === 'number') {
          const writer = Number(key.slice(1))
          ;(writer % 2 === instance ? same : cross).push(at - value)
        }
      }
    })
  }
  const rate = WRITERS * UPDATES_PER_WRITER_PER_SECOND
  let sent = 0
  let cursor = 0
  const start = now()
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const elapsed = now() - start
      measuring = elapsed >= WARMUP_MS
      const due = Math.floor((rate * elapsed) / 1000) - sent
      for (let index = 0; index < due; index++) {
        writers[cursor].doc.getMap('m').set(`w${cursor}`, now())
        cursor = (cursor + 1) % writers.length
        sent++
      }
      if (elapsed >= WARMUP_MS + DURATION_MS) {
        clearInterval(timer)
        resolve()
      }
    }, 5)
  })
  await sleep(300)
  measuring = false
  for (const client of [...writers, ...observers.map((observer) => observer.client)]) {
    client.close()
  }
  return { same, cross }
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
    `${WRITERS} typing clients (${UPDATES_PER_WRITER_PER_SECOND} updates/s each) on one document, half on each of two instances; ${OBSERVERS_PER_INSTANCE} observers per instance`
  )
  console.log(
    'repeat | same-instance p50 / p99 | cross-instance p50 / p99 | p99 difference | load (1 min)'
  )
  await run(
    started.map(({ server }) => server),
    'typing-warm-up'
  )
  await sleep(500)
  for (let repeat = 1; repeat <= REPEATS; repeat++) {
    const { same, cross } = await run(
      started.map(({ server }) => server),
      `typing-${repeat}`
    )
    const figure = (values: number[], p: number) => percentile(values, p).toFixed(1)
    const difference = percentile(cross, 99) - percentile(same, 99)
    console.log(
      `${repeat}      | ${figure(same, 50)} / ${figure(same, 99)} ms (${same.length})`.padEnd(36) +
        ` | ${figure(cross, 50)} / ${figure(cross, 99)} ms (${cross.length})`.padEnd(30) +
        ` | ${difference >= 0 ? '+' : ''}${difference.toFixed(1)} ms (target ≤ +5) | ${loadavg()[0].toFixed(2)}`
    )
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
