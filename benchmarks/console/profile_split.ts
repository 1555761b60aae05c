/**
 * Where recording's main-thread time and allocations go over HTTP: the
 * overhead benchmark's app (benchmarks/lib/console_overhead_app.ts) served
 * with recording off and on, each in a process of its own, under the
 * inspector's CPU profiler (100 µs sampling) or its sampling heap profiler
 * (`BENCH_PROFILE=heap`, every allocation counted, collected or not) over the
 * measured window only. Each sample goes to the innermost frame that names a
 * part: the console's own code, the structured clone to the SQLite writer
 * thread (`postMessage`), the container resolving middleware per request
 * (`@adonisjs/fold`), garbage collection, or the app and framework. Printed
 * per request, off beside on. Profiles of separate processes differ by more
 * than their sampling error (JIT and cache luck): the console's own share,
 * absent when off, is the steady figure. `BENCH_REQUESTS`, `BENCH_ROUNDS`.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { migrateStubs } from '../../tests/migration_stubs.ts'
import { runLoad } from '../lib/http_app.ts'
import { bootOverheadApp, seedBenchItems, workPlan } from '../lib/console_overhead_app.ts'
import { figure, printTable } from '../lib/report.ts'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 6000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const HEAP = process.env.BENCH_PROFILE === 'heap'

interface Frame {
  functionName: string
  url: string
}

/** The part a stack belongs to, from its innermost frame outwards */
function partOf(stack: Frame[]) {
  const inner = stack[0]
  if (inner?.functionName === '(idle)') return 'idle'
  if (inner?.functionName === '(program)') return 'V8 and native code, unattributed'
  if (inner?.functionName === '(garbage collector)') return 'garbage collection'
  for (const { functionName, url } of stack) {
    if (functionName === 'postMessage' && url.includes('internal/worker')) {
      return 'clone to the writer thread'
    }
    if (url.includes('@adonisjs/fold')) return 'container (middleware per request)'
    if (url.includes('/src/console/') || url.includes('console_provider')) return 'console code'
    if (url.includes('node_modules')) return 'app and framework'
  }
  return 'app and framework'
}

interface ProfileNode {
  id: number
  callFrame: Frame
  children?: number[]
  selfSize?: number
}

/** Microseconds (CPU) or bytes (heap) per part, from one profile */
function split(profile: any): Record<string, number> {
  const totals: Record<string, number> = {}
  const add = (part: string, amount: number) => (totals[part] = (totals[part] ?? 0) + amount)
  if (HEAP) {
    const walk = (node: any, stack: Frame[]) => {
      const inner = [node.callFrame, ...stack]
      if (node.selfSize) add(partOf(inner), node.selfSize)
      for (const child of node.children ?? []) walk(child, inner)
    }
    walk(profile.head, [])
    return totals
  }
  const byId = new Map<number, ProfileNode>()
  const parent = new Map<number, ProfileNode>()
  for (const node of profile.nodes as ProfileNode[]) {
    byId.set(node.id, node)
    for (const child of node.children ?? []) parent.set(child, node)
  }
  const parts = new Map<number, string>()
  profile.samples.forEach((id: number, index: number) => {
    let part = parts.get(id)
    if (part === undefined) {
      const stack: Frame[] = []
      for (let at = byId.get(id); at; at = parent.get(at.id)) stack.push(at.callFrame)
      part = partOf(stack)
      parts.set(id, part)
    }
    add(part, profile.timeDeltas[index] ?? 0)
  })
  return totals
}

/** One side in this process: boot, warm up, profile the measured window, print the split */
async function profileSide(recording: boolean) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-console-profile-'))
  const app = await bootOverheadApp('sqlite', directory, recording)
  const db = await app.app.container.make('lucid.db')
  await migrateStubs(db, 'console')
  await seedBenchItems(db)
  const manager = recording ? await app.app.container.make('atrium.console') : undefined
  await runLoad(workPlan(app.url, 2000, 16))
  await manager?.recorder.flush()
  const session = new Session()
  session.connect()
  if (HEAP) {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    })
  } else {
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 100 })
    await session.post('Profiler.start')
  }
  const cpu = process.threadCpuUsage()
  await runLoad(workPlan(app.url, REQUESTS, 16))
  await manager?.recorder.flush()
  const used = process.threadCpuUsage(cpu)
  const { profile } = HEAP
    ? await session.post('HeapProfiler.stopSampling')
    : await session.post('Profiler.stop')
  session.disconnect()
  await app.close()
  await rm(directory, { recursive: true, force: true })
  const parts = split(profile)
  if (!HEAP) parts['main-thread CPU (threadCpuUsage)'] = used.user + used.system
  console.log(JSON.stringify(parts))
}

if (process.env.PROFILE_SPLIT_SIDE) {
  await profileSide(process.env.PROFILE_SPLIT_SIDE === 'on')
  process.exit(0)
}

const sums = { off: {} as Record<string, number>, on: {} as Record<string, number> }
for (let round = 0; round < ROUNDS; round++) {
  for (const side of ['off', 'on'] as const) {
    const child = spawnSync(
      process.execPath,
      ['--import=@poppinss/ts-exec', fileURLToPath(import.meta.url)],
      { env: { ...process.env, PROFILE_SPLIT_SIDE: side }, encoding: 'utf8', stdio: 'pipe' }
    )
    if (child.status !== 0) throw new Error(`profile of the ${side} side failed: ${child.stderr}`)
    const parts = JSON.parse(child.stdout.trim().split('\n').pop()!)
    for (const [part, amount] of Object.entries<number>(parts)) {
      sums[side][part] = (sums[side][part] ?? 0) + amount
    }
  }
}
const perRequest = (amount = 0) => amount / (REQUESTS * ROUNDS)
const unit = HEAP ? ' B' : ' µs'
const parts = [...new Set([...Object.keys(sums.off), ...Object.keys(sums.on)])].sort()
printTable(
  `Console recording over HTTP, ${HEAP ? 'bytes allocated' : 'main-thread time'} per request by part (SQLite, POST /work, ${ROUNDS} x ${REQUESTS} requests per side, separate processes)`,
  parts.map((part) => ({
    part,
    off: figure(perRequest(sums.off[part]), unit),
    on: figure(perRequest(sums.on[part]), unit),
    difference: figure(perRequest(sums.on[part]) - perRequest(sums.off[part]), unit),
  }))
)
