import { test } from '@japa/runner'
import type { HttpContext } from '@adonisjs/core/http'
import { bucketUpperBound, defineTool, durationBucket } from '../../src/agent/main.ts'
import type { AgentConfigInput } from '../../src/agent/main.ts'
import { ALICE, BOB, agentApp, deltasOf, errorOf } from './helpers.ts'

const ADMIN = { 'x-admin': 'yes' }

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

/** An app with the governance API, authorized by an `x-admin: yes` header */
async function dashboardApp(config: Partial<AgentConfigInput> = {}) {
  const seen: string[] = []
  const app = await agentApp({
    config: {
      dashboard: {
        middleware: [
          async (ctx: HttpContext, next: () => Promise<void>) => {
            seen.push(ctx.request.url())
            await next()
          },
        ],
        authorize: (ctx) => ctx.request.header('x-admin') === 'yes',
      },
      ...config,
    },
  })
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${app.url}/ai-gateway/api${path}`, {
      ...init,
      headers: { ...ADMIN, ...(init.headers as Record<string, string>) },
    })
  const json = async (path: string) => {
    const response = await api(path)
    return { status: response.status, body: (await response.json()) as any }
  }
  /** Runs one finished turn and returns its run and thread ids */
  const turn = async (message: string, actor = ALICE) => {
    const { response, sse } = await app.chat({ message }, actor)
    await sse.rest()
    return {
      runId: response.headers.get('x-agent-run-id')!,
      threadId: response.headers.get('x-agent-thread-id')!,
    }
  }
  return { ...app, api, json, turn, seen }
}

test.group('Agent governance API', () => {
  test('deny by default: without dashboard.authorize every route is 403; without dashboard none is mounted', async ({
    assert,
  }) => {
    const denied = await agentApp({ config: { dashboard: {} } })
    for (const path of ['/runs', '/threads-page', '/approvals']) {
      const response = await fetch(`${denied.url}/ai-gateway/api${path}`)
      const error = await errorOf(response)
      assert.equal(response.status, 403, path)
      assert.deepEqual(error, {
        code: 'E_AGENT_DASHBOARD_FORBIDDEN',
        message:
          'The governance API denies this request: dashboard.authorize in config/agent.ts must allow it',
      })
    }
    const unmounted = await agentApp()
    const unmountedResponse = await fetch(`${unmounted.url}/ai-gateway/api/runs`)
    assert.equal(unmountedResponse.status, 404)

    const app = await dashboardApp()
    const refused = await app.api('/runs', { headers: { 'x-admin': 'no' } })
    assert.equal(refused.status, 403)
    const allowed = await app.api('/runs')
    assert.equal(allowed.status, 200)
    // The dashboard middleware runs before the authorization check, on every route
    assert.deepEqual(app.seen, ['/ai-gateway/api/runs', '/ai-gateway/api/runs'])
  })

  test('runs and runs-page: newest first, filters, real totals and pages', async ({ assert }) => {
    const app = await dashboardApp()
    const first = await app.turn('one')
    const second = await app.turn('two', BOB)
    app.fake.reply({ text: ['x'], cutAfter: 0 })
    const failed = await app.turn('three')

    const recent = await app.json('/runs?limit=2')
    assert.deepEqual(
      recent.body.map((row: any) => row.id),
      [failed.runId, second.runId]
    )
    assert.include(recent.body[0], { status: 'failed', errorCode: 'run_failed', actorRef: 'alice' })

    const page = await app.json('/runs-page?limit=2&page=2')
    assert.deepEqual(page.body.total, 3)
    assert.deepEqual(page.body.page, 2)
    assert.deepEqual(page.body.pageSize, 2)
    assert.deepEqual(
      page.body.rows.map((row: any) => row.id),
      [first.runId]
    )
    const done = await app.json('/runs-page?where[status]=done')
    assert.equal(done.body.total, 2)
    const today = new Date().toISOString().slice(0, 10)
    const inRange = await app.json(`/runs-page?where[fromDay]=${today}&where[toDay]=${today}`)
    assert.equal(inRange.body.total, 3)
    const before = await app.json('/runs-page?where[toDay]=2020-01-01')
    assert.equal(before.body.total, 0)
  })

  test('paged routes answer 400 naming an unknown where field, a bad limit or a bad day', async ({
    assert,
  }) => {
    const app = await dashboardApp()
    const cases: Array<[string, string, string]> = [
      [
        '/runs-page?where[actorRef]=alice',
        'where[actorRef]',
        'Unknown where field "actorRef": use one of agentName, status, errorCode, fromDay, toDay',
      ],
      [
        '/threads-page?where[status]=done',
        'where[status]',
        'Unknown where field "status": use one of actorRef, title, fromDay, toDay',
      ],
      ['/runs?limit=201', 'limit', '"limit" must be an integer from 1 to 200'],
      ['/tool-calls-page?limit=0', 'limit', '"limit" must be an integer from 1 to 200'],
      ['/runs-page?page=-1', 'page', '"page" must be an integer from 1 to 1000000'],
      [
        '/tool-calls-page?where[fromDay]=2026-02-30',
        'where[fromDay]',
        '"where[fromDay]" must be a day as YYYY-MM-DD',
      ],
    ]
    for (const [path, field, message] of cases) {
      const response = await app.api(path)
      assert.equal(response.status, 400, path)
      assert.deepEqual(await errorOf(response), {
        code: 'E_AGENT_INVALID_REQUEST',
        message,
        field,
      })
    }
  })

  test('threads and threads-page: case-insensitive title search with literal %, actor filter, run counts', async ({
    assert,
  }) => {
    const app = await dashboardApp()
    const paid = await app.turn('Invoice 100% PAID')
    await app.turn('Invoice 1000 paid')
    await app.turn('Other question', BOB)
    const { sse } = await app.chat({ message: 'again', threadId: paid.threadId })
    await sse.rest()

    const found = await app.json(`/threads-page?where[title]=${encodeURIComponent('100% paid')}`)
    assert.equal(found.body.total, 1)
    assert.include(found.body.rows[0], {
      id: paid.threadId,
      actorRef: 'alice',
      label: 'Invoice 100% PAID',
      runs: 2,
      deleted: false,
    })
    const invoices = await app.json('/threads-page?where[title]=INVOICE')
    assert.equal(invoices.body.total, 2)
    const bobs = await app.json('/threads-page?where[actorRef]=bob')
    assert.deepEqual(
      bobs.body.rows.map((row: any) => row.title),
      ['Other question']
    )
    const recent = await app.json('/threads?limit=1')
    assert.equal(recent.body[0].id, paid.threadId)
  })

  test('approvals: pending calls oldest first; a decision is 204, a second 409, an unknown id 404, a bad body 400', async ({
    assert,
  }) => {
    const calls: unknown[] = []
    const app = await dashboardApp({ tools: [refundTool(calls)] })
    app.fake.reply(
      { toolCalls: [{ id: 'call_d', name: 'refund', input: { order: 'D4' } }] },
      { text: ['Refunded.'] }
    )
    const { response, sse } = await app.chat({ message: 'refund D4' })
    await sse.until((frame) => frame.event === 'approval')

    const pending = await app.json('/approvals')
    assert.deepEqual(
      pending.body.map((row: any) => [row.toolCallId, row.toolName, row.actorRef, row.input]),
      [['call_d', 'refund', 'alice', { order: 'D4' }]]
    )
    assert.equal(pending.body[0].runId, response.headers.get('x-agent-run-id'))

    const post = (id: string, body: unknown) =>
      app.api(`/approvals/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    const malformed = await post('call_d', { approved: 'yes' })
    assert.equal(malformed.status, 400)
    assert.include(await errorOf(malformed), { field: 'approved' })
    const unknown = await post('call_unknown', { approved: true })
    assert.equal(unknown.status, 404)

    const decided = await post('call_d', { approved: true })
    assert.equal(decided.status, 204)
    assert.deepEqual(deltasOf(await sse.rest()), ['Refunded.'])
    assert.deepEqual(calls, [{ order: 'D4' }])
    const late = await post('call_d', { approved: false })
    assert.equal(late.status, 409)
    assert.include(await errorOf(late), { code: 'E_AGENT_ALREADY_DECIDED' })
    const emptied = await app.json('/approvals')
    assert.deepEqual(emptied.body, [])

    const activity = await app.json('/tool-calls-page?where[toolName]=refund&where[toolType]=tool')
    assert.equal(activity.body.total, 1)
    assert.include(activity.body.rows[0], {
      toolCallId: 'call_d',
      status: 'succeeded',
      toolType: 'tool',
    })
    const none = await app.json('/tool-calls-page?where[status]=failed')
    assert.equal(none.body.total, 0)
    const recent = await app.json('/tool-calls')
    assert.lengthOf(recent.body, 1)
  })

  test('/spend and /reliability, served from the narrow rollups, agree with the rows they sum', async ({
    assert,
  }) => {
    const app = await dashboardApp()
    const store = app.manager.config.store
    const priced = await app.api('/pricing', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        modelId: 'fake-model',
        inputPricePer1m: 1000,
        outputPricePer1m: 3000,
      }),
    })
    assert.equal(priced.status, 201)
    await app.turn('one')
    await app.turn('two')
    await app.turn('three', BOB)
    // Failures of other agents, started some seconds ago so their durations differ
    const ends: Array<[string, 'failed' | 'aborted', string | null, number]> = [
      ['auditor', 'failed', 'max_steps', 4000],
      ['auditor', 'failed', 'max_steps', 9000],
      ['auditor', 'failed', null, 2500],
      ['planner', 'aborted', 'aborted', 30_000],
    ]
    for (const [agentName, status, errorCode, ago] of ends) {
      const thread = await store.createThread({ actorRef: 'carol', title: null })
      const id = crypto.randomUUID()
      await store.createRun({ id, threadId: thread.id, actorRef: 'carol', agentName })
      await app.db
        .from('agent_runs')
        .where('id', id)
        .update({ created_at: new Date(Date.now() - ago) })
      await store.finishRun(id, { status, errorCode, steps: 2, model: 'fake.chat:fake-model' })
    }

    // What a scan of the usage rows would answer
    const usage = await app.db.from('agent_usage')
    const sums = (key: string) => {
      const totals = new Map<string, [number, number, number]>()
      for (const row of usage) {
        const [calls, tokens, cost] = totals.get(row[key]) ?? [0, 0, 0]
        const used = Number(row.uncached_input_tokens) + Number(row.output_tokens)
        totals.set(row[key], [calls + 1, tokens + used, cost + Number(row.cost)])
      }
      return [...totals.entries()].sort((a, b) => b[1][2] - a[1][2] || a[0].localeCompare(b[0]))
    }
    const figures = (row: any) => [
      row.modelCalls,
      row.uncachedInputTokens + row.outputTokens,
      row.costMicros,
    ]
    const spend = await app.json('/spend')
    assert.equal(spend.status, 200)
    assert.deepEqual(
      spend.body.byModel.map((row: any) => [row.model, figures(row)]),
      sums('model')
    )
    assert.deepEqual(
      spend.body.byActor.map((row: any) => [row.actorRef, figures(row)]),
      sums('actor_ref')
    )
    assert.deepEqual(
      spend.body.byActor.map((row: any) => row.actorRef),
      ['alice', 'bob']
    )
    assert.deepEqual(figures(spend.body.trend.at(-1)), [
      usage.length,
      sums('model').reduce((sum, [, [, tokens]]) => sum + tokens, 0),
      sums('model').reduce((sum, [, [, , cost]]) => sum + cost, 0),
    ])
    assert.isAbove(spend.body.trend.at(-1).costMicros, 0)

    // What a scan of the run rows would answer: counts, error families, nearest-rank p95
    const runs = await app.db.from('agent_runs').orderBy('duration_ms', 'asc')
    const p95Of = (rows: any[]) => {
      const exact = Number(rows[Math.ceil((rows.length * 95) / 100) - 1].duration_ms)
      const reported = bucketUpperBound(durationBucket(exact))
      assert.isAtLeast(reported, exact)
      assert.isAtMost(reported, Math.max(exact * 1.05, 19))
      return reported
    }
    const reliability = await app.json('/reliability')
    assert.equal(reliability.status, 200)
    assert.deepInclude(reliability.body.metrics, {
      runs: 7,
      succeeded: 3,
      failed: 3,
      cancelled: 1,
      p95DurationMs: p95Of(runs),
    })
    assert.deepEqual(
      reliability.body.byAgent.map((row: any) => [
        row.agentName,
        row.runs,
        row.failed,
        row.p95DurationMs,
      ]),
      // Most runs first, ties by name
      ['auditor', 'default', 'planner'].map((agentName) => {
        const own = runs.filter((row: any) => row.agent_name === agentName)
        return [
          agentName,
          own.length,
          own.filter((row: any) => row.status === 'failed').length,
          p95Of(own),
        ]
      })
    )
    assert.deepEqual(reliability.body.errors, [
      { errorCode: 'max_steps', count: 2 },
      { errorCode: 'unknown', count: 1 },
    ])

    // A transient turn writes no run row; its end, duration included, is counted at once
    const { response, sse } = await app.chat({ message: 'off the record', transient: true })
    assert.equal(response.status, 200)
    await sse.rest()
    const after = await app.json('/reliability')
    assert.deepInclude(after.body.metrics, { runs: 8, succeeded: 4 })
    assert.deepInclude(after.body.byAgent[0], { agentName: 'default', runs: 4 })
    const [timed] = await app.db.from('agent_duration_rollups').sum('runs as runs')
    assert.equal(Number(timed.runs), 8)
  })
})
