import { randomUUID } from 'node:crypto'
import { test } from '@japa/runner'
import { actors, defineConfig, defineTool, sinks } from '../../src/agent/main.ts'
import type { AgentConfigInput } from '../../src/agent/main.ts'
import { defineConfig as redisConfig } from '@adonisjs/redis'
import { SERVICES, createRedis, setupApp } from '../helpers.ts'
import { agentApp, bodyOf, deltasOf, runStatus } from './helpers.ts'

const REDIS_URL = `redis://${SERVICES.redis.host}:${SERVICES.redis.port}`

/**
 * Two real app instances on one database and one Redis, as two replicas
 * behind a load balancer: A runs the turns, B serves what reaches it.
 */
async function twoInstances(config: Partial<AgentConfigInput> = {}) {
  const prefix = `atrium:agent:test:${randomUUID()}:`
  const redis = createRedis(prefix)
  // Short enough for the lapse test, long enough for a loaded test machine's pauses
  const sink = sinks.redis({ url: REDIS_URL, prefix, leaseMs: 1000 })
  const a = await agentApp({ config: { sink, ...config } })
  const b = await agentApp({ config: { sink, ...config }, sharedWith: { fake: a.fake } })
  return { a, b, redis, prefix }
}

function refundTool(calls: unknown[]) {
  return defineTool({
    spec: {
      name: 'refund',
      description: 'Refunds an order',
      roles: ['ADMIN'],
      requiresApproval: true,
      inputSchema: { type: 'object', properties: { order: { type: 'string' } } },
    },
    handler(input: { order: string }) {
      calls.push(input)
      return { refunded: input.order }
    },
  })
}

test.group('Agent Redis run log across instances', () => {
  test('a run started on A is resumed from B with Last-Event-ID: exactly the missing frames, then the tail', async ({
    assert,
  }) => {
    const { a, b } = await twoInstances()
    a.fake.reply({ text: ['a', 'b', 'c', 'd'], stallAfter: 3 })
    const first = await a.chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    assert.deepEqual(deltasOf(await first.sse.until((frame) => frame.id === '2')), ['a'])
    await first.sse.cancel()
    await a.fake.stalled()

    const second = await b.resume(runId, { lastEventId: '2' })
    assert.equal(second.response.status, 200)
    assert.deepEqual(await second.sse.until((frame) => frame.id === '4'), [
      { event: 'meta', data: { runId } },
      { id: '3', data: { delta: 'b' } },
      { id: '4', data: { delta: 'c' } },
    ])
    a.fake.release()
    assert.deepEqual(await second.sse.rest(), [
      { id: '5', data: { delta: 'd' } },
      { id: '6', event: 'done', data: {} },
    ])
    // A finished run replays from Redis on B and closes at once
    const late = await b.resume(runId, { after: '4' })
    assert.deepEqual(deltasOf(await late.sse.rest()), ['d'])
  })

  test('a cancel sent to B stops the run on A', async ({ assert }) => {
    const { a, b } = await twoInstances()
    a.fake.reply({ text: ['x', 'y'], stallAfter: 1 })
    const first = await a.chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    await a.fake.stalled()

    const cancelled = await b.request('POST', `/chat/${runId}/cancel`)
    assert.deepEqual(await bodyOf(cancelled), { aborted: true })
    const rest = await first.sse.rest()
    assert.deepEqual(rest.at(-1), { id: '3', event: 'done', data: { aborted: true } })
    assert.equal(await runStatus(a.manager, runId), 'aborted')
    // A second cancel finds the run ended
    assert.deepEqual(await bodyOf(await b.request('POST', `/chat/${runId}/cancel`)), {
      aborted: false,
    })
  })

  test('an approval decided on B resumes the run waiting on A; the tool runs once', async ({
    assert,
  }) => {
    const calls: unknown[] = []
    const { a, b } = await twoInstances({ tools: [refundTool(calls)] })
    a.fake.reply(
      { toolCalls: [{ id: 'call_r', name: 'refund', input: { order: 'A1' } }] },
      { text: ['Refunded.'] }
    )
    const { sse } = await a.chat({ message: 'refund A1' })
    const announced = await sse.until((frame) => frame.event === 'approval')
    assert.equal(announced.at(-1)!.data.toolCallId, 'call_r')

    const decided = await b.request('POST', '/tool-call/approve', undefined, {
      toolCallId: 'call_r',
    })
    assert.deepEqual(await bodyOf(decided), { ok: true })
    assert.deepEqual(deltasOf(await sse.rest()), ['Refunded.'])
    assert.deepEqual(calls, [{ order: 'A1' }])
    const second = await b.request('POST', '/tool-call/approve', undefined, {
      toolCallId: 'call_r',
    })
    assert.deepEqual(await bodyOf(second), { ok: false })
  })

  test('when A stops renewing its lease mid-run, a reader on B ends with run_failed', async ({
    assert,
  }) => {
    const { a, b } = await twoInstances()
    a.fake.reply({ text: ['p', 'q'], stallAfter: 1 })
    const first = await a.chat({ message: 'go' })
    const runId = first.response.headers.get('x-agent-run-id')!
    await first.sse.until((frame) => frame.id === '2')
    await a.fake.stalled()
    // What B sees of a dead instance: no more frames, no more lease renewals
    a.manager.config.sink!.close()

    const reader = await b.resume(runId, { lastEventId: '1' })
    assert.deepEqual(await reader.sse.rest(), [
      { event: 'meta', data: { runId } },
      { id: '2', data: { delta: 'p' } },
      {
        id: '3',
        event: 'error',
        data: { code: 'run_failed', message: 'The server running this turn stopped' },
      },
    ])
    assert.equal(await runStatus(b.manager, runId), 'failed')
    const run = await b.manager.config.store.findRun(runId)
    assert.equal(run?.errorCode, 'run_failed')
  })

  test('a lease that only expired (a long pause) is taken back by the instance running the run', async ({
    assert,
  }) => {
    const { a, redis, prefix } = await twoInstances()
    a.fake.reply({ text: ['m', 'n'], stallAfter: 1 })
    const { response, sse } = await a.chat({ message: 'go' })
    const runId = response.headers.get('x-agent-run-id')!
    await a.fake.stalled()
    const lease = `${prefix}run:${runId}:lease`
    await redis.del(lease)
    // No reader ended the run meanwhile: the next renewal sets the lease again
    while (!(await redis.exists(lease))) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(await redis.get(lease), a.manager.config.sink!.instanceId)
    a.fake.release()
    assert.deepEqual(deltasOf(await sse.rest()), ['m', 'n'])
    assert.equal(await runStatus(a.manager, runId), 'done')
  })

  test('sinks.redis({ connection }) uses the app connection of @adonisjs/redis', async ({
    assert,
  }) => {
    const prefix = `atrium:agent:test:${randomUUID()}:`
    createRedis(prefix)
    const instance = {
      providers: [() => import('@adonisjs/redis/redis_provider')],
      appConfig: {
        redis: redisConfig({
          connection: 'main',
          connections: { main: { host: SERVICES.redis.host, port: SERVICES.redis.port } },
        }),
      },
      config: { sink: sinks.redis({ connection: 'main', prefix, leaseMs: 1000 }) },
    }
    const a = await agentApp(instance)
    const b = await agentApp({ ...instance, sharedWith: { fake: a.fake } })
    a.fake.reply({ text: ['u', 'v'] })
    const { response, sse } = await a.chat({ message: 'go' })
    const runId = response.headers.get('x-agent-run-id')!
    await sse.rest()
    await a.manager.config.sink!.flush()
    const replay = await b.resume(runId, { lastEventId: '1' })
    assert.deepEqual(await replay.sse.rest(), [
      { event: 'meta', data: { runId } },
      { id: '2', data: { delta: 'u' } },
      { id: '3', data: { delta: 'v' } },
      { id: '4', event: 'done', data: {} },
    ])
  })

  test('frames of a run are stored in a Redis stream keyed by their sequence, dropped after retention', async ({
    assert,
  }) => {
    const { a, redis, prefix } = await twoInstances({ sse: { retainFinishedMs: 60_000 } })
    a.fake.reply({ text: ['h', 'i'] })
    const { response, sse } = await a.chat({ message: 'go' })
    const runId = response.headers.get('x-agent-run-id')!
    await sse.rest()
    await a.manager.config.sink!.flush()
    const entries = await redis.xrange(`${prefix}run:${runId}:log`, '-', '+')
    assert.deepEqual(
      entries.map(([id, fields]) => [id, fields[1]]),
      [
        ['1-0', 'meta'],
        ['2-0', ''],
        ['3-0', ''],
        ['4-0', 'done'],
      ]
    )
    const ttl = await redis.pttl(`${prefix}run:${runId}:log`)
    assert.isAbove(ttl, 0)
    assert.isAtMost(ttl, 60_000)
    assert.equal(await redis.exists(`${prefix}run:${runId}:lease`), 0)
  })
})

test.group('Agent Redis sink config', () => {
  test('sinks.redis() needs exactly one of connection or url', ({ assert }) => {
    const message =
      "sinks.redis() in config/agent.ts needs one of { connection: 'main' } (a connection of config/redis.ts) or { url: 'redis://…' }"
    assert.throws(() => sinks.redis({}), message)
    assert.throws(() => sinks.redis({ connection: 'main', url: REDIS_URL }), message)
    assert.throws(
      () => sinks.redis({ url: REDIS_URL, leaseMs: 10 }),
      'Invalid "leaseMs" of sinks.redis() in config/agent.ts: expected an integer of at least 100 (milliseconds), received 10'
    )
  })

  test('a named connection without @adonisjs/redis stops the boot with the fix', async ({
    assert,
  }) => {
    await assert.rejects(
      () =>
        setupApp({
          database: true,
          providers: [() => import('../../providers/agent_provider.ts')],
          config: {
            agent: defineConfig({
              model: { label: 'idle', async *streamStep() {} },
              actorResolver: actors.header(),
              sink: sinks.redis({ connection: 'main' }),
            }),
          },
        }),
      `sinks.redis({ connection: 'main' }) in config/agent.ts needs @adonisjs/redis: run "node ace add @adonisjs/redis", or pass { url } instead`
    )
  })
})
