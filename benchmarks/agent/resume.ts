/**
 * Reconnect after 10,000 frames: a client reads the first frames of a turn
 * whose model streams 10,000 deltas, drops its connection, and once the run
 * has ended reconnects with `Last-Event-ID`. The replay is compared frame by
 * frame (id, event, data) with the whole stream read from its start, and
 * the time to the first replayed frame and to the last is printed:
 *
 * - memory log: one instance, the reconnect reaching the instance that ran it;
 * - Redis log (`sinks.redis`): two instances on one database and one Redis,
 *   the run on A, the reconnect on B.
 *
 * The reconnecting reader runs in a process of its own
 * (benchmarks/lib/agent_resume_client.ts).
 */
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { sinks } from '../../src/agent/main.ts'
import { SERVICES } from '../../tests/helpers.ts'
import { SseReader, type SseFrame } from '../../tests/sse_client.ts'
import { agentDatabase, fakeModelProcess, gatewayApp } from '../lib/agent_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const DELTAS = Number(process.env.BENCH_FRAMES ?? 10_000)
const CUT = Number(process.env.BENCH_CUT ?? 100)
const REPEATS = Number(process.env.BENCH_REPEATS ?? 10)
const REDIS_URL = `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`
// Every frame of the run is kept, so the whole replay can be compared
const sse = { maxFramesPerRun: DELTAS + 100 }
const headers = { 'x-actor-id': 'bench' }

const database = await agentDatabase()
const fake = await fakeModelProcess()
const prefix = `atrium:agent:bench:${randomUUID()}:`
const single = await gatewayApp(database, fake.url, { sse })
const redisSink = sinks.redis({ url: REDIS_URL, prefix })
const a = await gatewayApp(database, fake.url, { sse, sink: redisSink })
const b = await gatewayApp(database, fake.url, { sse, sink: redisSink })

const reader = fork(fileURLToPath(new URL('../lib/agent_resume_client.ts', import.meta.url)), {
  execArgv: ['--import=@poppinss/ts-exec'],
})
await once(reader, 'message')

const key = (frame: SseFrame) => `${frame.id}|${frame.event ?? ''}|${JSON.stringify(frame.data)}`

/** The whole run from its start, read here */
function readFromStart(url: string, runId: string) {
  return fetch(`${url}/agent/chat/${runId}/stream?after=0`, { headers })
}

/** The reconnect, from the reader's process */
async function reconnectFrom(url: string, runId: string, lastEventId: string) {
  reader.send({ url, runId, lastEventId })
  const [answer] = (await once(reader, 'message')) as [
    { frames: SseFrame[]; firstMs: number; allMs: number; error?: string },
  ]
  if (answer.error !== undefined) throw new Error(`reader: ${answer.error}`)
  return answer
}

/**
 * One turn started on `runOn`, dropped after `CUT` frames, replayed from
 * `resumeOn` once it ended: whether the replay is exactly the missing frames,
 * and how long its first and last frame took.
 */
async function reconnect(runOn: string, resumeOn: string) {
  await fake.reply({ text: Array.from({ length: DELTAS }, (_, index) => `d${index} `) })
  const controller = new AbortController()
  const response = await fetch(`${runOn}/agent/chat`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'a long answer' }),
    signal: controller.signal,
  })
  const runId = response.headers.get('x-agent-run-id')!
  const dropped = new SseReader(response)
  const seen = await dropped.until((frame) => frame.id === String(CUT))
  controller.abort()

  // The whole run, read from its start once it ended: the reference
  const whole = await new SseReader(await readFromStart(runOn, runId)).rest()
  const { frames, firstMs, allMs } = await reconnectFrom(resumeOn, runId, seen.at(-1)!.id!)
  const replayed = frames.filter((frame) => frame.id !== undefined)

  const missing = whole.filter((frame) => frame.id !== undefined && Number(frame.id) > CUT)
  const exact =
    replayed.length === missing.length &&
    replayed.every((frame, index) => key(frame) === key(missing[index]))
  return { exact, frames: whole.length, replayed: replayed.length, firstMs, allMs }
}

try {
  const results: Record<string, Awaited<ReturnType<typeof reconnect>>[]> = { memory: [], redis: [] }
  // One unmeasured turn each warms the paths
  await reconnect(single.url, single.url)
  await reconnect(a.url, b.url)
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    results.memory.push(await reconnect(single.url, single.url))
    results.redis.push(await reconnect(a.url, b.url))
  }
  const row = (name: string, runs: Awaited<ReturnType<typeof reconnect>>[]) => ({
    'log': name,
    'frames / replayed': `${runs[0].frames.toLocaleString('en-US')} / ${runs[0].replayed.toLocaleString('en-US')}`,
    'exactly the missing frames': `${runs.filter((run) => run.exact).length} of ${runs.length}`,
    'first frame p50': figure(
      percentile(
        runs.map((run) => run.firstMs),
        50
      ),
      ' ms'
    ),
    'first frame max': figure(Math.max(...runs.map((run) => run.firstMs)), ' ms'),
    'whole replay p50': figure(
      percentile(
        runs.map((run) => run.allMs),
        50
      ),
      ' ms'
    ),
  })
  printTable(
    `Reconnect with Last-Event-ID after frame ${CUT} of a finished run of ${DELTAS.toLocaleString('en-US')} deltas, ${REPEATS} runs each (SQLite)`,
    [
      row('memory (one instance)', results.memory),
      row('Redis (run on A, resumed on B)', results.redis),
    ]
  )
  const inexact = [...results.memory, ...results.redis].filter((run) => !run.exact).length
  if (inexact) {
    console.error(`  ${inexact} replays were not exactly the missing frames`)
    process.exitCode = 1
  }
} finally {
  reader.kill()
  await b.close()
  await a.close()
  await single.close()
  fake.close()
  await database.remove()
}
