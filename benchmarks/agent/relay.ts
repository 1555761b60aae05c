/**
 * Relay: what the gateway does to a stream once it flows. The fake model
 * (its own process) writes deltas paced by the clock, each carrying the
 * monotonic time of its write; a client (its own process) reads them through
 * the gateway or straight through the AI SDK and measures each delta's
 * delivery delay and each stream's rate.
 *
 * - One stream at 1,000 deltas a second, gateway beside direct, repeated.
 * - Many concurrent streams on one instance (500 by default, 10 deltas a
 *   second each): delivery p50/p99 once every stream flows, beside as many
 *   direct streams (in one process, the AI SDK's own cost per stream), and
 *   how long until every stream flowed; then, in a round of its own, the
 *   gateway process's memory per open stream (heap and external after a
 *   full GC once every stream flows, against the same app once they ended).
 * - Where a burst's time goes: the CPU time of the gateway, its client and
 *   the fake model (three processes on the machine's cores) from the start
 *   until every stream flowed, for those streams and for as many one-word
 *   turns with nothing else streaming.
 */
import { fileURLToPath } from 'node:url'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { availableParallelism } from 'node:os'
import { performance } from 'node:perf_hooks'
import { agentDatabase, fakeModelProcess, gatewayApp } from '../lib/agent_app.ts'
import { processCpuMicros } from '../lib/process_cpu.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const TOKENS = Number(process.env.BENCH_TOKENS ?? 5000)
const RATE = Number(process.env.BENCH_RATE ?? 1000)
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3)
const STREAMS = Number(process.env.BENCH_STREAMS ?? 500)
const STREAM_TOKENS = Number(process.env.BENCH_STREAM_TOKENS ?? 100)
const STREAM_RATE = Number(process.env.BENCH_STREAM_RATE ?? 10)

interface StreamFigures {
  delays: number[]
  rate: number
}

/** CPU milliseconds (user and system) of each process of the benchmark */
interface CpuTimes {
  app: number
  client: number
  model: number
}

const database = await agentDatabase()
const fake = await fakeModelProcess()
const http = await gatewayApp(database, fake.url)
const client = fork(fileURLToPath(new URL('../lib/agent_stream_client.ts', import.meta.url)), {
  execArgv: ['--import=@poppinss/ts-exec'],
})
await once(client, 'message')

/** The CPU time each process has used so far (the other two read from /proc: NaN elsewhere) */
function cpuTimes(): CpuTimes {
  const app = process.cpuUsage()
  const msOf = (pid: number | undefined) => (processCpuMicros(pid ?? 0) ?? Number.NaN) / 1000
  return { app: (app.user + app.system) / 1000, client: msOf(client.pid), model: msOf(fake.pid) }
}

/** The gateway's heap and external memory after a full collection, in bytes */
function memoryNow() {
  globalThis.gc!()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.external
}

/**
 * Opens `streams` streams of `tokens` deltas at `rate` a second through one
 * path; `whileStreaming` runs once every stream has delivered a delta.
 */
async function round(
  path: 'gateway' | 'direct' | { gateway: string },
  streams: number,
  tokens: number,
  rate: number,
  whileStreaming?: () => void
): Promise<StreamFigures[] & { allFlowingMs: number; startCpu: CpuTimes }> {
  const reply = { text: Array.from({ length: tokens }, () => 'x'), perSecond: rate, stamp: true }
  await fake.reply(...Array.from({ length: streams }, () => reply))
  const before = cpuTimes()
  client.send(
    path === 'direct'
      ? { kind: 'direct', modelUrl: fake.url, streams }
      : { kind: 'gateway', url: path === 'gateway' ? http.url : path.gateway, streams }
  )
  const sent = performance.now()
  let allFlowingMs = Number.NaN
  let startCpu: CpuTimes = { app: Number.NaN, client: Number.NaN, model: Number.NaN }
  for (;;) {
    const [answer] = (await once(client, 'message')) as [
      { streaming?: true; streams?: StreamFigures[]; error?: string },
    ]
    if (answer.error !== undefined) throw new Error(`client: ${answer.error}`)
    if (answer.streaming) {
      allFlowingMs = performance.now() - sent
      const flowing = cpuTimes()
      startCpu = {
        app: flowing.app - before.app,
        client: flowing.client - before.client,
        model: flowing.model - before.model,
      }
      whileStreaming?.()
    }
    if (answer.streams) return Object.assign(answer.streams, { allFlowingMs, startCpu })
  }
}

const delaysOf = (streams: StreamFigures[]) => streams.flatMap((stream) => stream.delays)
const meanRate = (streams: StreamFigures[]) =>
  streams.reduce((sum, stream) => sum + stream.rate, 0) / streams.length

try {
  // Warm both paths (JIT, connection pools) before anything is measured
  await round('direct', 20, 50, 200)
  await round('gateway', 20, 50, 200)

  const single: Record<'gateway' | 'direct', StreamFigures[]> = { gateway: [], direct: [] }
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    // Alternating which path goes first so a noisy moment colours both alike
    const order =
      repeat % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const)
    for (const path of order) single[path].push(...(await round(path, 1, TOKENS, RATE)))
  }
  const singleRow = (path: 'gateway' | 'direct', name: string) => ({
    'path': name,
    'deltas/s (mean of runs)': figure(meanRate(single[path])),
    'runs (deltas/s)': single[path].map((stream) => figure(stream.rate)).join(', '),
    'delay p50': figure(percentile(delaysOf(single[path]), 50), ' ms'),
    'delay p99': figure(percentile(delaysOf(single[path]), 99), ' ms'),
  })
  printTable(
    `One stream of ${TOKENS.toLocaleString('en-US')} deltas paced at ${RATE.toLocaleString('en-US')}/s, ${REPEATS} runs each (SQLite, OpenAI wire on loopback)`,
    [
      singleRow('direct', 'AI SDK streamText (baseline)'),
      singleRow('gateway', 'gateway POST /agent/chat'),
      {
        'path': 'ratio gateway / baseline',
        'deltas/s (mean of runs)': figure(meanRate(single.gateway) / meanRate(single.direct), 'x'),
        'runs (deltas/s)': '',
        'delay p50': '',
        'delay p99': '',
      },
    ]
  )

  const direct = await round('direct', STREAMS, STREAM_TOKENS, STREAM_RATE)
  const gateway = await round('gateway', STREAMS, STREAM_TOKENS, STREAM_RATE)
  // The same burst of turns with a one-word answer: no stream already flowing competes with it
  const burst = await round('gateway', STREAMS, 1, STREAM_RATE)
  // Memory in a round of its own, on an app that forgets finished runs after a second (they
  // are kept 5 minutes for resumes by default): what every stream holds while all flow, against
  // the same app once they all ended and were forgotten. A full collection mid-stream would
  // delay deliveries, so this round's delays are not counted.
  const forgetful = await gatewayApp(database, fake.url, { sse: { retainFinishedMs: 1000 } })
  let during = Number.NaN
  await round({ gateway: forgetful.url }, STREAMS, STREAM_TOKENS, STREAM_RATE, () => {
    during = memoryNow()
  })
  await new Promise((resolve) => setTimeout(resolve, 2500))
  const after = memoryNow()
  await forgetful.close()
  const concurrentRow = (name: string, streams: Awaited<ReturnType<typeof round>>) => ({
    'path': name,
    'all flowing after': figure(streams.allFlowingMs, ' ms'),
    'deltas once all flow': delaysOf(streams).length.toLocaleString('en-US'),
    'delay p50': figure(percentile(delaysOf(streams), 50), ' ms'),
    'delay p99': figure(percentile(delaysOf(streams), 99), ' ms'),
    'delay max': figure(Math.max(...delaysOf(streams)), ' ms'),
    'deltas/s per stream': figure(meanRate(streams)),
  })
  printTable(
    `${STREAMS} concurrent streams of ${STREAM_TOKENS} deltas at ${STREAM_RATE}/s each (the gateway on one instance)`,
    [concurrentRow('AI SDK streamText (baseline)', direct), concurrentRow('gateway', gateway)]
  )
  const cpuRow = (name: string, streams: Awaited<ReturnType<typeof round>>) => ({
    'turns started at once': name,
    'all flowing after': figure(streams.allFlowingMs, ' ms'),
    'gateway CPU': figure(streams.startCpu.app, ' ms'),
    'client CPU': figure(streams.startCpu.client, ' ms'),
    'model CPU': figure(streams.startCpu.model, ' ms'),
    'gateway CPU per turn': figure(streams.startCpu.app / STREAMS, ' ms'),
  })
  printTable(
    `Where a burst's time goes: CPU time of each process from the start until every stream delivered a delta (${availableParallelism()} cores)`,
    [
      cpuRow(`${STREAMS} streams of ${STREAM_TOKENS} deltas at ${STREAM_RATE}/s`, gateway),
      cpuRow(`${STREAMS} one-word turns`, burst),
    ]
  )
  console.log(
    `  gateway memory per open stream (heap + external after a full GC, all ${STREAMS} flowing, against the same app once they ended): ${figure((during - after) / STREAMS / 1024, ' KB')}`
  )
} finally {
  client.kill()
  await http.close()
  fake.close()
  await database.remove()
}
