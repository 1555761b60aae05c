import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { test } from '@japa/runner'
import { sinks } from '../../src/agent/main.ts'
import { SERVICES, createRedis } from '../helpers.ts'
import { SseReader, type SseFrame } from '../sse_client.ts'
import { ALICE, actorHeaders, agentApp, runStatus } from './helpers.ts'

const FIXTURE = fileURLToPath(new URL('./fixtures/agent_instance.ts', import.meta.url))
const REDIS_URL = `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`
// Short so the lapse comes quickly, long enough for a loaded machine's pauses
const LEASE_MS = 1000

type Instance = ChildProcessByStdio<Writable, Readable, Readable>

/**
 * Fails with `message` (and what the child printed) unless `promise` settles
 * within `ms`: a bound so a broken run ends the test instead of hanging it.
 */
async function within<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message())), ms)
  })
  try {
    return await Promise.race([promise, expired])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Instance A in a child process on the test's database and Redis prefix,
 * with the model at `modelUrl`; killed when the test ends, passed or not.
 */
async function startInstance(
  directory: string,
  modelUrl: string,
  prefix: string,
  cleanup: (fn: () => Promise<void>) => void
) {
  const child: Instance = spawn(
    process.execPath,
    ['--import=@poppinss/ts-exec', FIXTURE, directory, modelUrl, prefix, String(LEASE_MS)],
    { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'test' } }
  )
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  child.stdin.on('error', () => {})
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const alive = () => child.exitCode === null && child.signalCode === null
  cleanup(async () => {
    if (alive()) child.kill('SIGKILL')
    await exited
  })
  const printed = () => `stdout: ${stdout || '(nothing)'}\nstderr: ${stderr || '(nothing)'}`

  const listening = new Promise<string>((resolve, reject) => {
    const onData = () => {
      const url = /^LISTENING (\S+)$/m.exec(stdout)?.[1]
      if (url) resolve(url)
    }
    child.stdout.on('data', onData)
    child.once('exit', (code, signal) =>
      reject(new Error(`Instance A exited (${signal ?? code}) before it listened\n${printed()}`))
    )
  })
  const url = await within(listening, 30_000, () => `Instance A did not listen\n${printed()}`)
  return {
    url,
    printed,
    /** Kills A as an orchestrator or the OOM killer would: no shutdown, no last write */
    async kill() {
      child.kill('SIGKILL')
      await within(exited, 10_000, () => `Instance A did not die of SIGKILL\n${printed()}`)
      return child.signalCode
    },
  }
}

/** Polls `check` until it holds, failing with `message` after `ms` (the loop stops too) */
async function pollUntil(check: () => Promise<boolean>, ms: number, message: () => string) {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(message())
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Frames until `match`, failing with the frames read when none comes */
async function framesUntil(sse: SseReader, match: (frame: SseFrame) => boolean, what: string) {
  const frames: SseFrame[] = []
  const reading = sse.until((frame) => {
    frames.push(frame)
    return match(frame)
  })
  return within(reading, 15_000, () => `${what}; frames so far: ${JSON.stringify(frames)}`)
}

/**
 * B in this process and A in a child process, on the test's database and a
 * Redis prefix of their own, with a model that stalls after two deltas;
 * `chatOnA` starts a turn on A.
 */
async function twoInstances(directory: string, cleanup: (fn: () => Promise<void>) => void) {
  const prefix = `atrium:agent:test:${randomUUID()}:`
  const redis = createRedis(prefix)
  const sink = sinks.redis({ url: REDIS_URL, prefix, leaseMs: LEASE_MS })
  // B builds the tables and the fake model; A, in its child process, runs on both
  const b = await agentApp({ config: { sink } })
  b.fake.reply({ text: ['a', 'b', 'c'], stallAfter: 2 })
  const a = await startInstance(directory, b.fake.url, prefix, cleanup)
  const chatOnA = () =>
    fetch(`${a.url}/agent/chat`, {
      method: 'POST',
      headers: { ...actorHeaders(ALICE), 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'go' }),
    })
  return { prefix, redis, a, b, chatOnA }
}

test.group('Agent Redis run log with a killed instance', () => {
  test('A is killed mid-run: a reader on B gets the missing frames, then run_failed, and the run is failed', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const { prefix, redis, a, b, chatOnA } = await twoInstances(fs.basePath, cleanup)
    const started = await chatOnA()
    assert.equal(started.status, 200)
    const onA = new SseReader(started)
    const runId = started.headers.get('x-agent-run-id')!
    const threadId = started.headers.get('x-agent-thread-id')!
    const seen = await framesUntil(onA, (frame) => frame.id === '3', 'A streamed no second delta')
    assert.deepEqual(seen, [
      { id: '1', event: 'meta', data: { runId, threadId } },
      { id: '2', data: { delta: 'a' } },
      { id: '3', data: { delta: 'b' } },
    ])
    await onA.cancel()
    await within(b.fake.stalled(), 15_000, () => 'The model never reached its stall point')
    // A mirrors a frame into Redis as it streams it: wait until the last one read is there
    const log = `${prefix}run:${runId}:log`
    const mirrored = async () => {
      for (;;) {
        const entries = await redis.xrange(log, '3-0', '3-0')
        if (entries.length) return
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    await within(mirrored(), 10_000, () => `Frame 3 never reached ${log}\n${a.printed()}`)
    assert.equal(await runStatus(b.manager, runId), 'running')

    assert.equal(await a.kill(), 'SIGKILL')

    const reader = await b.resume(runId, { lastEventId: '2' })
    assert.equal(reader.response.status, 200)
    const frames = await framesUntil(
      reader.sse,
      (frame) => frame.event === 'error',
      `B's reader did not end with an error once A's ${LEASE_MS} ms lease lapsed`
    )
    assert.deepEqual(frames, [
      { event: 'meta', data: { runId } },
      { id: '3', data: { delta: 'b' } },
      {
        id: '4',
        event: 'error',
        data: { code: 'run_failed', message: 'The server running this turn stopped' },
      },
    ])
    assert.deepEqual(await within(reader.sse.rest(), 10_000, () => 'B kept the stream open'), [])
    // Whoever ended it (this reader, or a sweep) records the row after the frame is out
    await pollUntil(
      async () => (await runStatus(b.manager, runId)) === 'failed',
      10_000,
      () => 'The run ended with run_failed but its row stayed running'
    )
    const run = await b.manager.config.store.findRun(runId)
    assert.equal(run?.errorCode, 'run_failed')

    // A later reader, on B too, gets the same end from the stored run
    const late = await b.resume(runId, { lastEventId: '3' })
    assert.deepEqual(await within(late.sse.rest(), 10_000, () => 'A late resume never ended'), [
      { event: 'meta', data: { runId } },
      {
        id: '4',
        event: 'error',
        data: { code: 'run_failed', message: 'The server running this turn stopped' },
      },
    ])
  }).timeout(90_000)

  test('A is killed mid-run and nobody comes back for it: B still records the run failed and ends its log', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const { prefix, redis, a, b, chatOnA } = await twoInstances(fs.basePath, cleanup)
    const started = await chatOnA()
    const runId = started.headers.get('x-agent-run-id')!
    await started.body?.cancel()
    await within(b.fake.stalled(), 15_000, () => 'The model never reached its stall point')
    assert.equal(await runStatus(b.manager, runId), 'running')
    const leases = `${prefix}runs:leases`
    assert.isNotNull(await redis.zscore(leases, runId))

    assert.equal(await a.kill(), 'SIGKILL')

    // No reader, no cancel: only B's sweep can end it
    await pollUntil(
      async () => (await runStatus(b.manager, runId)) === 'failed',
      20_000,
      () => `The run of the killed instance stayed running\n${a.printed()}`
    )
    const run = await b.manager.config.store.findRun(runId)
    assert.equal(run?.errorCode, 'run_failed')
    const [last] = await redis.xrevrange(`${prefix}run:${runId}:log`, '+', '-', 'COUNT', 1)
    assert.deepEqual(last[1], [
      'e',
      'error',
      'd',
      JSON.stringify({ code: 'run_failed', message: 'The server running this turn stopped' }),
    ])
    await pollUntil(
      async () => (await redis.zscore(leases, runId)) === null,
      10_000,
      () => 'The ended run kept its place among the live leases'
    )
  }).timeout(90_000)
})
