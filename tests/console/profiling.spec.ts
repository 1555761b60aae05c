import { test } from '@japa/runner'
import { setTimeout as delay } from 'node:timers/promises'
import { consoleApp } from './helpers.ts'
import { defineConfig } from '../../src/console/main.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import type { ConsoleConfig, ConsoleEntry } from '../../src/console/types.ts'
import {
  buildFlameTree,
  flattenFlameTree,
  sliceProfiles,
  type CpuProfile,
  type StoredFrame,
} from '../../src/console/profiling/flame_tree.ts'

/**
 * Spins for `ms` in a function whose name the flame tree must show. A fresh
 * function each call: V8 never inlines it into the route handler (an inlined
 * function compiled before profiling began has no frame of its own).
 */
function burnCpuForProfileTest(ms: number): number {
  const burner = new Function(
    'return function burnCpuForProfileTest(ms) { const until = Date.now() + ms; let spins = 0; while (Date.now() < until) spins++; return spins }'
  )()
  return burner(ms)
}

const ADMIN = { 'x-role': 'admin' }

/** A response's JSON body, untyped */
async function json(response: Response | Promise<Response>): Promise<any> {
  const awaited = await response
  return awaited.json()
}

/** An app with profiling on; `authorizeAction` lets requests with `x-role: admin` through */
async function profilingApp(config: ConsoleConfig = {}) {
  let entered!: () => void
  let release!: () => void
  const waiting = new Promise<void>((resolve) => (entered = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const app = await consoleApp({
    config: {
      profiling: { enabled: true },
      authorizeAction: (ctx) => ctx.request.header('x-role') === 'admin',
      buffer: { flushIntervalMs: 60_000 },
      ...config,
    },
    routes(router) {
      router.get('/burn', () => ({ spins: burnCpuForProfileTest(150) }))
      router.get('/ping', () => 'pong')
      // burns in turns, so the maxDurationMs timer can fire while the request runs
      router.get('/burn-slowly', async () => {
        for (let turn = 0; turn < 8; turn++) {
          burnCpuForProfileTest(25)
          await delay(1)
        }
        return 'burnt'
      })
      router.get('/wait', async () => {
        entered()
        await released
        return 'done'
      })
    },
  })
  const arm = (body: unknown, headers: Record<string, string> = ADMIN) =>
    app.api('/profiles/arm', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  return { ...app, arm, waiting, release }
}

type App = Awaited<ReturnType<typeof profilingApp>>

/** The stored CPU profiles, once `count` of them are written (polls the real store) */
async function storedProfiles(app: App, count = 1): Promise<ConsoleEntry[]> {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    await app.manager.profiler!.settled()
    await app.manager.recorder.flush()
    const page = await app.manager.store.list({ type: 'cpu_profile', limit: 50 })
    if (page.data.length >= count) {
      return Promise.all(
        page.data.map(async (summary) => (await app.manager.store.find(summary.id))!)
      )
    }
    await delay(20)
  }
  const { failed, dropped } = app.manager.recorder
  throw new Error(
    `fewer than ${count} CPU profiles were stored (${failed} failed, ${dropped} dropped)`
  )
}

test.group('Console CPU profiling', () => {
  test('an armed request is profiled into its batch, with the requests that ran beside it', async ({
    assert,
  }) => {
    const app = await profilingApp()
    assert.isFalse(app.manager.profiler!.sessionOpen)
    const armed = await app.arm({ count: 1, path: '/burn' })
    assert.equal(armed.status, 201)
    assert.equal(((await armed.json()) as any).data.armed.remaining, 1)
    // the inspector session is opened by the first capture, not by arming
    assert.isFalse(app.manager.profiler!.sessionOpen)

    // one request in flight (held open) while the profiled one runs; it is not profiled itself
    const held = fetch(`${app.url}/wait`)
    await app.waiting
    const burn = await fetch(`${app.url}/burn`)
    assert.equal(burn.status, 200)
    app.release()
    const heldResponse = await held
    assert.equal(await heldResponse.text(), 'done')
    // the arming was used up: the next /burn is not profiled
    await fetch(`${app.url}/burn`)

    const [profile] = await storedProfiles(app)
    assert.lengthOf(await storedProfiles(app), 1)
    assert.isTrue(app.manager.profiler!.sessionOpen)
    assert.equal(profile.summary, 'CPU profile: GET /burn')
    assert.includeMembers(profile.tags, ['armed', 'shared'])
    const content = profile.content as any
    assert.equal(content.otherRequests, 1)
    assert.equal(content.trigger, 'armed')
    assert.isAbove(content.samples, 0)
    const names = (content.frames as StoredFrame[]).map((frame) => frame.name)
    assert.include(names, 'burnCpuForProfileTest')
    const handler = (content.frames as StoredFrame[]).find((frame) =>
      frame.location.includes('profiling.spec.ts')
    )
    assert.match(handler!.location, /profiling\.spec\.ts:\d+$/)
    assert.equal(content.frames[0].total, content.samples)
    assert.equal(content.frames[0].parent, -1)

    const batch = await app.manager.store.batch(profile.batchId)
    assert.deepEqual(
      batch.map((entry) => entry.type),
      ['request', 'cpu_profile']
    )
    assert.equal(batch[0].summary, 'GET /burn')

    // the read API leaves the raw samples out; the entry says their size
    const shown = await json(app.api(`/entries/${profile.id}`))
    assert.notProperty(shown.data.content, 'raw')
    assert.isAbove(shown.data.content.rawBytes, 0)
    const listed = await json(app.api('/cpu-profiles'))
    assert.deepEqual(
      listed.data.map((entry: any) => entry.id),
      [profile.id]
    )
  })

  test('with maxConcurrent 2, overlapping captures share the run and each keeps its own interval', async ({
    assert,
  }) => {
    const app = await profilingApp({ profiling: { enabled: true, maxConcurrent: 2 } })
    const armed = await app.arm({ count: 2, method: 'GET', path: '/*' })
    assert.equal(armed.status, 201)
    const held = fetch(`${app.url}/wait`)
    await app.waiting
    // /burn ends first: the run is stopped, its part kept for /wait, and restarted
    await fetch(`${app.url}/burn`)
    app.release()
    const heldResponse = await held
    assert.equal(await heldResponse.text(), 'done')

    const profiles = await storedProfiles(app, 2)
    const bySummary = new Map(profiles.map((entry) => [entry.summary, entry]))
    const burn = bySummary.get('CPU profile: GET /burn')!
    const wait = bySummary.get('CPU profile: GET /wait')!
    assert.equal((burn.content as any).otherRequests, 1)
    assert.equal((wait.content as any).otherRequests, 1)
    assert.notEqual(burn.batchId, wait.batchId)
    // the held request did no work itself, but the burn ran inside its window: its samples are there
    const waitFrames = (wait.content as any).frames as StoredFrame[]
    assert.include(
      waitFrames.map((frame) => frame.name),
      'burnCpuForProfileTest'
    )
    assert.isAbove(wait.durationMs!, burn.durationMs!)
    assert.isUndefined(app.manager.profiler!.armed)
  })

  test('the raw .cpuprofile downloads only past authorizeAction, and is a valid profile', async ({
    assert,
  }) => {
    const app = await profilingApp()
    const armed = await app.arm({ path: '/burn' })
    assert.equal(armed.status, 201)
    await fetch(`${app.url}/burn`)
    const [profile] = await storedProfiles(app)

    const denied = await app.api(`/profiles/${profile.id}/download`)
    assert.equal(denied.status, 403)
    assert.equal(((await denied.json()) as any).errors[0].code, 'E_CONSOLE_FORBIDDEN')

    const response = await app.api(`/profiles/${profile.id}/download`, { headers: ADMIN })
    assert.equal(response.status, 200)
    assert.equal(
      response.headers.get('content-disposition'),
      `attachment; filename="profile-${profile.id}.cpuprofile"`
    )
    const raw = (await response.json()) as any
    const ids = new Set(raw.nodes.map((node: any) => node.id))
    assert.isAbove(raw.samples.length, 0)
    assert.equal(raw.samples.length, raw.timeDeltas.length)
    assert.isTrue(raw.samples.every((id: number) => ids.has(id)))
    assert.isAtMost(raw.startTime, raw.endTime)
    assert.isTrue(
      raw.nodes.some((node: any) => node.callFrame.functionName === 'burnCpuForProfileTest')
    )
    for (const node of raw.nodes) {
      for (const child of node.children) assert.isTrue(ids.has(child))
    }

    const requests = await app.manager.store.list({ type: 'request', limit: 1 })
    const notProfile = await app.api(`/profiles/${requests.data[0].id}/download`, {
      headers: ADMIN,
    })
    assert.equal(notProfile.status, 404)
    const badId = await app.api('/profiles/..%2F..%2Fetc/download', { headers: ADMIN })
    assert.equal(badId.status, 400)
  })

  test('arming is a mutation: refused without authorizeAction, and bad payloads name the field', async ({
    assert,
  }) => {
    const app = await profilingApp({ profiling: { enabled: true, maxArmedRequests: 5 } })
    const refused = await app.arm({ count: 1 }, {})
    assert.equal(refused.status, 403)
    const cases: Array<[unknown, string]> = [
      [{ count: 6 }, 'count'],
      [{ count: 0 }, 'count'],
      [{ method: 'not a method' }, 'method'],
      [{ path: 'burn' }, 'path'],
      [{ ttlMs: 'soon' }, 'ttlMs'],
      [{ windowMs: 120_000 }, 'windowMs'],
      [{ windowMs: 100, count: 2 }, 'windowMs'],
      [{ sampleEverything: true }, 'sampleEverything'],
    ]
    for (const [body, parameter] of cases) {
      const response = await app.arm(body)
      assert.equal(response.status, 400, JSON.stringify(body))
      assert.equal(((await response.json()) as any).errors[0].parameter, parameter)
    }
    assert.isUndefined(app.manager.profiler!.armed)
    assert.isFalse(app.manager.profiler!.sessionOpen)
  })

  test('a time window profiles everything and counts the requests that ran in it', async ({
    assert,
  }) => {
    const app = await profilingApp()
    const response = await app.arm({ windowMs: 3000 })
    assert.equal(response.status, 202)
    const { entryId } = ((await response.json()) as any).data.window
    // one capture at a time (maxConcurrent 1): a second window is refused
    const busy = await app.arm({ windowMs: 100 })
    assert.equal(busy.status, 409)
    assert.equal(((await busy.json()) as any).errors[0].code, 'E_CONSOLE_PROFILING_BUSY')
    await fetch(`${app.url}/burn`)
    await fetch(`${app.url}/ping`)

    const [profile] = await storedProfiles(app)
    assert.equal(profile.id, entryId)
    assert.equal(profile.batchId, entryId)
    assert.include(profile.tags, 'window')
    const content = profile.content as any
    assert.equal(content.trigger, 'window')
    assert.isNull(content.request)
    // the two host requests, and the refused arming (console requests run in the window too)
    assert.equal(content.otherRequests, 3)
    assert.include(
      (content.frames as StoredFrame[]).map((frame) => frame.name),
      'burnCpuForProfileTest'
    )
  })

  test('sampleRate 1 profiles every request; minDurationMs discards the short ones', async ({
    assert,
  }) => {
    const app = await profilingApp({
      profiling: { enabled: true, sampleRate: 1, minDurationMs: 100 },
    })
    await fetch(`${app.url}/ping`)
    await fetch(`${app.url}/burn`)
    await fetch(`${app.url}/ping`)
    await storedProfiles(app)
    await delay(50)
    const profiles = await storedProfiles(app)
    assert.deepEqual(
      profiles.map((entry) => entry.summary),
      ['CPU profile: GET /burn']
    )
    assert.include(profiles[0].tags, 'sampled')
    // the short requests' batches are still recorded, without a profile
    const requests = await app.manager.store.list({ type: 'request', limit: 10 })
    assert.lengthOf(requests.data, 3)
  })

  test('a capture stops at maxDurationMs and says it was truncated', async ({ assert }) => {
    const app = await profilingApp({ profiling: { enabled: true, maxDurationMs: 20 } })
    await app.arm({ path: '/burn-slowly' })
    const response = await fetch(`${app.url}/burn-slowly`)
    assert.equal(await response.text(), 'burnt')
    const [profile] = await storedProfiles(app)
    assert.include(profile.tags, 'truncated')
    assert.isTrue((profile.content as any).truncated)
    // it stopped while the request went on
    const requests = await app.manager.store.list({ type: 'request', limit: 1 })
    const request = requests.data[0]
    assert.equal(request.summary, 'GET /burn-slowly')
    assert.isBelow(profile.durationMs!, request.durationMs!)
  })

  test('while overload protection pauses recording, arming is refused', async ({ assert }) => {
    const app = await profilingApp({
      overloadProtection: { maxEventLoopLagMs: 100, startupGraceMs: 0 },
    })
    const monitor = app.manager.overload!
    monitor.detachTimer()
    monitor.sample()
    // block several turns: the delay histogram sees a task's lag from the next turn on
    for (let task = 0; task < 4; task++) {
      burnCpuForProfileTest(200)
      await new Promise((resolve) => setImmediate(resolve))
    }
    await delay(30)
    monitor.sample()
    assert.isTrue(app.manager.recorder.paused)

    const refused = await app.arm({ path: '/burn' })
    assert.equal(refused.status, 503)
    assert.equal(((await refused.json()) as any).errors[0].code, 'E_CONSOLE_PROFILING_PAUSED')
    assert.isUndefined(app.manager.profiler!.armed)
    assert.isFalse(app.manager.profiler!.sessionOpen)
  })

  test('profiling off: no profiler, no inspector session, no arm or download route', async ({
    assert,
  }) => {
    const app = await consoleApp({ config: { authorizeAction: () => true } })
    assert.isUndefined(app.manager.profiler)
    const arm = await app.api('/profiles/arm', { method: 'POST', body: '{}' })
    assert.equal(arm.status, 404)
    const download = await app.api('/profiles/0123456789abcdef01234567/download')
    assert.equal(download.status, 404)
    assert.isFalse(app.manager.config.profiling.enabled)
  })

  test('profiling is off by default; its options are checked by defineConfig', ({ assert }) => {
    assert.deepEqual(resolveConsoleConfig({}).profiling, {
      enabled: false,
      sampleRate: 0,
      maxConcurrent: 1,
      minDurationMs: 0,
      samplingIntervalMicros: 1000,
      maxDurationMs: 10_000,
      maxWindowMs: 60_000,
      maxArmedRequests: 100,
      maxArmTtlMs: 600_000,
      maxSamples: 20_000,
      maxNodes: 500,
      maxRawBytes: 5 * 1024 * 1024,
    })
    const config = (profiling: unknown) => () =>
      defineConfig({ profiling: profiling as ConsoleConfig['profiling'] })
    assert.throws(config({ sampleRate: 2 }), /"profiling\.sampleRate"/)
    assert.throws(config({ maxConcurrent: 0 }), /"profiling\.maxConcurrent"/)
    assert.throws(config({ samplingIntervalMicros: 1 }), /"profiling\.samplingIntervalMicros"/)
    assert.throws(config({ maxRawBytes: -1 }), /"profiling\.maxRawBytes"/)
    assert.throws(config('yes'), /"profiling"/)
  })

  test('two V8 runs merge by call path; the tree keeps the heaviest frames and folds the rest', ({
    assert,
  }) => {
    const frame = (id: number, name: string, children: number[] = []) => ({
      id,
      callFrame: {
        functionName: name,
        scriptId: '1',
        url: 'file:///app.js',
        lineNumber: id,
        columnNumber: 0,
      },
      children,
    })
    const run = (startTime: number, samples: number[]): CpuProfile => ({
      nodes: [
        frame(1, '(root)', [2]),
        frame(2, 'handler', [3, 4, 5]),
        frame(3, 'hot'),
        frame(4, 'warm'),
        frame(5, 'cold'),
      ],
      startTime,
      endTime: startTime + samples.length * 10,
      samples,
      timeDeltas: samples.map(() => 10),
    })
    // the first sample of the first run is before the capture began: left out
    const slice = sliceProfiles([run(1000, [5, 3, 3, 4]), run(2000, [3, 3, 5])], 1015, 5000, 100)
    assert.equal(slice.samples, 6)
    assert.isFalse(slice.truncated)
    const { tree, nodes, collapsed } = buildFlameTree(slice.profile, 3)
    assert.equal(tree.total, 6)
    const handler = tree.children[0]
    assert.equal(handler.name, 'handler')
    assert.equal(handler.location, 'file:///app.js:3')
    assert.deepEqual(
      handler.children.map((child) => [child.name, child.total]),
      [
        ['hot', 4],
        ['(other)', 2],
      ]
    )
    assert.equal(nodes, 3)
    assert.equal(collapsed, 2)
    // stored flat, parents first: MariaDB refuses JSON nested deeper than 32 levels
    assert.deepEqual(
      flattenFlameTree(tree).map((stored) => [stored.name, stored.parent, stored.total]),
      [
        ['(root)', -1, 6],
        ['handler', 0, 6],
        ['hot', 1, 4],
        ['(other)', 1, 2],
      ]
    )
    assert.isTrue(sliceProfiles([run(1000, [3, 3, 3])], 0, 5000, 2).truncated)
  })
})
