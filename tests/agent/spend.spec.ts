import diagnosticsChannel from 'node:diagnostics_channel'
import { test } from '@japa/runner'
import { BOB, agentApp, errorOf } from './helpers.ts'
import { dayFromToday, insightApp, rollup, runOf, usage } from './insight_helpers.ts'
import { SseReader } from '../sse_client.ts'
import { bucketUpperBound, durationBucket } from '../../src/agent/main.ts'

test.group('Agent spend rollups', () => {
  test('concurrent usage rows and run ends on one rollup key lose no increment', async ({
    assert,
  }) => {
    const app = await insightApp()
    const store = app.manager.config.store
    await app.post('/pricing', {
      modelId: 'load-model',
      inputPricePer1m: 1000,
      outputPricePer1m: 1000,
    })
    const run = await runOf(store)
    const writes = Array.from({ length: 12 }, (_, index) =>
      store.recordUsage(usage(run, index + 1))
    )
    const recorded = await Promise.all(writes)
    // 10 + 3 + 2 input tokens and 5 + 1 output tokens at 1000 per million each
    assert.deepEqual(new Set(recorded.map((row) => row.cost)), new Set([21_000]))

    const runs = await Promise.all(Array.from({ length: 6 }, () => runOf(store)))
    await Promise.all(
      runs.map((each, index) =>
        store.finishRun(each.runId, {
          status: index < 4 ? 'done' : 'failed',
          errorCode: index < 4 ? null : 'run_failed',
          steps: 1,
          model: 'load-model',
        })
      )
    )
    // A run ended twice at once is counted once
    await Promise.all([
      store.finishRun(run.runId, { status: 'aborted', steps: 12, model: 'load-model' }),
      store.finishRun(run.runId, { status: 'aborted', steps: 12, model: 'load-model' }),
    ])
    assert.deepEqual(await rollup(app, 'load-model'), [
      {
        modelCalls: 12,
        uncached: 120,
        reasoning: 12,
        cost: 12 * 21_000,
        succeeded: 4,
        failed: 2,
        cancelled: 1,
      },
    ])
    // The narrow rollups written in the same transactions lose nothing either
    const [byModel] = await app.db.from('agent_model_rollups').where('model', 'load-model')
    assert.deepEqual([Number(byModel.model_calls), Number(byModel.cost)], [12, 12 * 21_000])
    const [byAgent] = await app.db.from('agent_run_rollups').where('agent_name', 'default')
    assert.deepEqual(
      [byAgent.runs_succeeded, byAgent.runs_failed, byAgent.runs_cancelled].map(Number),
      [4, 2, 1]
    )
    const [failures] = await app.db.from('agent_error_rollups').where('error_code', 'run_failed')
    assert.equal(Number(failures.runs_failed), 2)
    const [timed] = await app.db.from('agent_duration_rollups').sum('runs as runs')
    assert.equal(Number(timed.runs), 7)
    const finished = await store.findRun(run.runId)
    assert.equal(finished?.status, 'aborted')
    assert.isAtLeast(finished!.durationMs!, 0)
  })

  test('GET /spend sums the rollups of the last 30 days by model, actor and day', async ({
    assert,
  }) => {
    const app = await insightApp()
    await app.post('/pricing', {
      modelId: 'fake-model',
      inputPricePer1m: 1000,
      outputPricePer1m: 2000,
    })
    await app.turn('one')
    await app.turn('two')
    await app.turn('three', BOB)
    // Narrow rollups with no usage row behind them: the route reads rollups, not usage rows
    const old = { day: '2000-01-15', model_calls: 7, cost: 5_000_000 }
    await app.db.table('agent_model_rollups').insert({ ...old, model: 'old-model' })
    await app.db.table('agent_actor_rollups').insert({ ...old, actor_ref: 'carol' })

    const { status, body } = await app.json('/spend')
    assert.equal(status, 200)
    assert.equal(body.to, dayFromToday())
    assert.equal(body.from, dayFromToday(-29))
    const perCall = 10 * 1000 + 5 * 2000
    assert.deepEqual(body.byModel, [
      {
        model: 'fake.chat:fake-model',
        modelCalls: 3,
        unknownUsageCalls: 0,
        unpricedCalls: 0,
        uncachedInputTokens: 30,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 15,
        reasoningTokens: 0,
        costMicros: 3 * perCall,
        cost: '0.060000',
      },
    ])
    assert.deepEqual(
      body.byActor.map((row: any) => [row.actorRef, row.costMicros]),
      [
        ['alice', 2 * perCall],
        ['bob', perCall],
      ]
    )
    assert.lengthOf(body.trend, 30)
    assert.equal(body.trend[0].day, dayFromToday(-29))
    assert.deepInclude(body.trend[0], { modelCalls: 0, costMicros: 0, cost: '0.000000' })
    assert.deepInclude(body.trend[29], { day: dayFromToday(), modelCalls: 3 })

    const past = await app.json('/spend?from=2000-01-01&to=2000-01-31')
    assert.deepEqual(
      past.body.byModel.map((row: any) => [row.model, row.modelCalls, row.cost]),
      [['old-model', 7, '5.000000']]
    )
    assert.deepEqual(
      past.body.byActor.map((row: any) => [row.actorRef, row.modelCalls, row.cost]),
      [['carol', 7, '5.000000']]
    )
    assert.lengthOf(past.body.trend, 31)
    assert.deepInclude(past.body.trend[14], { day: '2000-01-15', modelCalls: 7 })
  })

  test('GET /top-threads ranks threads by cost with their title as label; limit 10 by default, 200 at most', async ({
    assert,
  }) => {
    const app = await insightApp()
    await app.post('/pricing', {
      modelId: 'fake-model',
      inputPricePer1m: 1000,
      outputPricePer1m: 1000,
    })
    app.fake.reply({
      text: ['long'],
      usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
    })
    const costly = await app.turn('the costly thread')
    const threads = [costly]
    for (let index = 0; index < 10; index++) threads.push(await app.turn(`thread ${index}`))

    const { status, body } = await app.json('/top-threads')
    assert.equal(status, 200)
    assert.lengthOf(body, 10)
    assert.deepEqual(body[0], {
      threadId: costly.threadId,
      actorRef: 'alice',
      title: 'the costly thread',
      label: 'the costly thread',
      deleted: false,
      runs: 1,
      modelCalls: 1,
      tokens: 1500,
      costMicros: 1_500_000,
      cost: '1.500000',
    })
    // Equal costs fall back to the thread id, so the order is stable
    const rest = body.slice(1).map((row: any) => row.threadId)
    assert.deepEqual(rest, [...rest].sort())

    const one = await app.json('/top-threads?limit=1')
    assert.deepEqual(
      one.body.map((row: any) => row.threadId),
      [costly.threadId]
    )
    const all = await app.json('/top-threads?limit=200')
    assert.lengthOf(all.body, 11)
    for (const limit of ['0', '201', 'ten']) {
      const response = await app.api(`/top-threads?limit=${limit}`)
      assert.equal(response.status, 400, limit)
      const error = await errorOf(response)
      assert.equal(error.field, 'limit')
    }
    const empty = await app.json(`/top-threads?from=2000-01-01&to=2000-01-02`)
    assert.deepEqual(empty.body, [])
  })

  test('GET /reliability: rates from the rollups, p95 duration from the histograms within 5%, errors by code', async ({
    assert,
  }) => {
    const app = await insightApp()
    const store = app.manager.config.store
    const end = async (
      agentName: string,
      status: 'done' | 'failed' | 'aborted',
      durationMs: number,
      errorCode: string | null = null
    ) => {
      const { runId } = await runOf(store, agentName)
      // Started `durationMs` ago, so the duration measured at its end is known within a few ms
      await app.db
        .from('agent_runs')
        .where('id', runId)
        .update({ created_at: new Date(Date.now() - durationMs) })
      await store.finishRun(runId, { status, errorCode, steps: 1, model: 'm' })
    }
    for (let second = 1; second <= 20; second++) await end('writer', 'done', second * 1000)
    await end('reader', 'failed', 30_000, 'run_failed')
    await end('reader', 'failed', 40_000, 'run_failed')
    await end('reader', 'failed', 50_000, 'quota_exceeded')
    await end('reader', 'failed', 55_000)
    await end('reader', 'aborted', 60_000, 'aborted')

    /** The exact nearest-rank p95 of the stored durations, and what its bucket reports */
    const exactP95 = async (agentName?: string) => {
      const query = app.db.from('agent_runs').orderBy('duration_ms', 'asc')
      if (agentName) query.where('agent_name', agentName)
      const rows = await query.select('duration_ms')
      const durations = rows.map((row) => Number(row.duration_ms))
      const exact = durations[Math.ceil((durations.length * 95) / 100) - 1]
      return { exact, reported: bucketUpperBound(durationBucket(exact)) }
    }
    const overall = await exactP95()
    const writer = await exactP95('writer')
    const reader = await exactP95('reader')
    // 25 runs: the 24th duration (~55 s); writer's 19th (~19 s); reader's 5th (~60 s)
    assert.closeTo(overall.exact, 55_000, 5_000)
    assert.closeTo(writer.exact, 19_000, 5_000)
    assert.closeTo(reader.exact, 60_000, 5_000)
    for (const { exact, reported } of [overall, writer, reader]) {
      assert.isAtLeast(reported, exact)
      assert.isAtMost(reported, exact * 1.05)
    }

    const { status, body } = await app.json('/reliability')
    assert.equal(status, 200)
    assert.deepEqual(body.metrics, {
      runs: 25,
      succeeded: 20,
      failed: 4,
      cancelled: 1,
      successRate: 20 / 25,
      errorRate: 4 / 25,
      retries: 0,
      p95DurationMs: overall.reported,
    })
    assert.deepEqual(body.byAgent, [
      {
        agentName: 'writer',
        runs: 20,
        succeeded: 20,
        failed: 0,
        cancelled: 0,
        successRate: 1,
        errorRate: 0,
        retries: 0,
        p95DurationMs: writer.reported,
      },
      {
        agentName: 'reader',
        runs: 5,
        succeeded: 0,
        failed: 4,
        cancelled: 1,
        successRate: 0,
        errorRate: 0.8,
        retries: 0,
        p95DurationMs: reader.reported,
      },
    ])
    // A failure without a code counts as unknown; a cancelled run is no error
    assert.deepEqual(body.errors, [
      { errorCode: 'run_failed', count: 2 },
      { errorCode: 'quota_exceeded', count: 1 },
      { errorCode: 'unknown', count: 1 },
    ])
    assert.lengthOf(body.trend, 30)
    assert.deepInclude(body.trend[29], { day: dayFromToday(), runs: 25, failed: 4 })
    assert.deepInclude(body.trend[0], { runs: 0, successRate: null, errorRate: null })

    const before = await app.json('/reliability?from=2000-01-01&to=2000-01-01')
    assert.deepInclude(before.body.metrics, { runs: 0, p95DurationMs: null, successRate: null })
    assert.deepEqual(before.body.errors, [])
  })

  test('GET /tools: calls, failures, rejections and p95 execution time per tool', async ({
    assert,
  }) => {
    const app = await insightApp()
    const store = app.manager.config.store
    const run = await runOf(store)
    const call = async (toolName: string, id: string, status: any, executionMs: number | null) => {
      await store.claimToolCall({ ...run, actorRef: 'alice', toolCallId: id, toolName, input: {} })
      await store.finishToolCall(run.runId, id, { status, output: null, executionMs })
    }
    for (let ms = 1; ms <= 20; ms++) await call('search', `s${ms}`, 'succeeded', ms)
    await call('search', 's-failed', 'failed', 50)
    await call('refund', 'r1', 'rejected', null)
    await call('refund', 'r2', 'denied', null)

    const { status, body } = await app.json('/tools')
    assert.equal(status, 200)
    // 21 timed calls: the nearest rank of the 95th percentile is the 20th value
    assert.deepEqual(body, [
      { toolName: 'search', calls: 21, failed: 1, rejected: 0, denied: 0, p95ExecutionMs: 20 },
      { toolName: 'refund', calls: 2, failed: 0, rejected: 1, denied: 1, p95ExecutionMs: null },
    ])
    const before = await app.json('/tools?to=2000-01-01')
    assert.deepEqual(before.body, [])
  })

  test('from and to: a malformed day, from after to, or more than 366 days is 400 naming the parameter', async ({
    assert,
  }) => {
    const app = await insightApp()
    const cases: Array<[string, string]> = [
      ['/spend?from=2024-13-01', 'from'],
      ['/spend?to=yesterday', 'to'],
      ['/spend?from=2024-02-30', 'from'],
      ['/reliability?from=2024-03-02&to=2024-03-01', 'from'],
      ['/tools?from=2023-01-01&to=2024-01-02', 'from'],
      ['/top-threads?from=20240101', 'from'],
    ]
    for (const [path, field] of cases) {
      const response = await app.api(path)
      assert.equal(response.status, 400, path)
      const error = await errorOf(response)
      assert.equal(error.code, 'E_AGENT_INVALID_REQUEST', path)
      assert.equal(error.field, field, path)
    }
    // A leap year's whole span, both days counted, is the longest accepted
    const longest = await app.json('/spend?from=2024-01-01&to=2024-12-31')
    assert.equal(longest.status, 200)
    assert.lengthOf(longest.body.trend, 366)
  })

  test('deny by default: the aggregate routes and the stream answer 403 without dashboard.authorize', async ({
    assert,
  }) => {
    const denied = await agentApp({ config: { dashboard: {} } })
    for (const path of ['/spend', '/top-threads', '/reliability', '/tools', '/stream']) {
      const response = await fetch(`${denied.url}/ai-gateway/api${path}`)
      assert.equal(response.status, 403, path)
      const error = await errorOf(response)
      assert.equal(error.code, 'E_AGENT_DASHBOARD_FORBIDDEN')
    }
    const app = await insightApp()
    const refused = await app.api('/spend', { headers: { 'x-admin': 'no' } })
    assert.equal(refused.status, 403)
  })

  test('GET /stream sends a frame per agent diagnostics event of a run, and lets go when the client leaves', async ({
    assert,
  }) => {
    const app = await insightApp()
    const response = await app.api('/stream')
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type')!, /^text\/event-stream/)
    const sse = new SseReader(response)
    await sse.until((frame) => frame.comment !== undefined, { comments: true })

    const { runId } = await app.turn('watch me')
    const frames = await sse.until(
      (frame) => frame.data?.event === 'run.finished' && frame.data.payload.runId === runId
    )
    const events = frames.filter((frame) => frame.data?.payload?.runId === runId)
    assert.deepEqual(
      events.map((frame) => frame.data.event),
      ['run.started', 'usage.recorded', 'run.finished']
    )
    const finished = events.at(-1)!.data
    assert.deepEqual(Object.keys(finished).sort(), ['event', 'payload', 'ts'])
    assert.isNumber(finished.ts)
    assert.include(finished.payload, { runId, status: 'done', agentName: 'default', steps: 1 })
    assert.deepInclude(events[1].data.payload, { costSource: 'unpriced', known: true })

    await sse.cancel()
    // The server drops its subscription once the client has gone
    const channel = diagnosticsChannel.channel('atrium:agent:run.started')
    for (let attempt = 0; attempt < 100 && channel.hasSubscribers; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.isFalse(channel.hasSubscribers)
  })
})
