import { test } from '@japa/runner'
import { setTimeout as delay } from 'node:timers/promises'
import { consoleApp } from './helpers.ts'

/**
 * Keeps the event loop busy, as an overloaded app does, then lets it turn so
 * the delay histogram's timer records the lag.
 */
async function blockLoop(ms: number, tasks = 4) {
  // the delay histogram sees a task's lag from the next turn on: block several turns
  for (let task = 0; task < tasks; task++) {
    const until = Date.now() + ms
    while (Date.now() < until) {
      // spin
    }
    await new Promise((resolve) => setImmediate(resolve))
  }
  await delay(30)
}

test.group('Console overload protection', () => {
  test('a lagging event loop pauses recording; a calm one resumes it (hysteresis)', async ({
    assert,
  }) => {
    const { url, manager, api } = await consoleApp({
      config: {
        overloadProtection: { maxEventLoopLagMs: 100, startupGraceMs: 0 },
        exceptions: { captureHttp4xx: false },
        buffer: { flushIntervalMs: 60_000 },
      },
      routes(router) {
        router.get('/work', () => 'ok')
        router.get('/resumed', () => 'ok')
        router.get('/fail', () => {
          throw new Error('while paused')
        })
      },
    })
    const monitor = manager.overload!
    monitor.detachTimer()
    monitor.sample()
    await blockLoop(200)
    monitor.sample()
    assert.isTrue(manager.recorder.paused)
    assert.isAbove(monitor.lastLagMs, 100)

    const health = await api('/health')
    const body = (await health.json()) as any
    const data = body.data
    assert.equal(data.recorder.state, 'paused')
    assert.equal(data.recorder.pauses, 1)
    assert.isNumber(data.recorder.pausedSince)

    const whilePaused = await fetch(`${url}/work?while=paused`)
    assert.equal(whilePaused.status, 200)
    const failing = await fetch(`${url}/fail`)
    assert.equal(failing.status, 500)
    assert.equal(manager.recorder.exceptionsWhilePaused, 1)

    // calm windows until one falls under half the threshold
    for (let attempt = 0; attempt < 50 && manager.recorder.paused; attempt++) {
      await delay(100)
      monitor.sample()
    }
    assert.isFalse(manager.recorder.paused)
    assert.isBelow(monitor.lastLagMs, 50)

    const resumed = await fetch(`${url}/resumed`)
    assert.equal(resumed.status, 200)
    await manager.recorder.flush()
    const { data: requests } = await manager.store.list({ type: 'request', limit: 10 })
    assert.deepEqual(
      requests.map((entry) => entry.summary),
      ['GET /resumed']
    )
    const { data: exceptions } = await manager.store.list({ type: 'exception', limit: 10 })
    assert.lengthOf(exceptions, 0)
  })

  test('a lag over the threshold but under the pause line keeps a paused recorder paused', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({
      config: { overloadProtection: { maxEventLoopLagMs: 100, startupGraceMs: 0 } },
    })
    const monitor = manager.overload!
    monitor.detachTimer()
    monitor.sample()
    await blockLoop(200)
    monitor.sample()
    assert.isTrue(manager.recorder.paused)
    // between half the threshold and the threshold: not calm enough to resume
    await blockLoop(70)
    monitor.sample()
    if (monitor.lastLagMs >= 50) assert.isTrue(manager.recorder.paused)
    assert.equal(monitor.pauses, 1)
  })

  test('during the startup grace a lagging loop never pauses recording', async ({ assert }) => {
    const { manager } = await consoleApp({
      config: { overloadProtection: { maxEventLoopLagMs: 100, startupGraceMs: 60_000 } },
    })
    const monitor = manager.overload!
    monitor.detachTimer()
    monitor.sample()
    await blockLoop(200)
    monitor.sample()
    assert.isAbove(monitor.lastLagMs, 100)
    assert.isFalse(manager.recorder.paused)
    assert.equal(monitor.pauses, 0)
  })

  test('overloadProtection: false builds no monitor; bad values are config errors', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({ config: { overloadProtection: false } })
    assert.isUndefined(manager.overload)
    const { defineConfig } = await import('../../src/console/main.ts')
    const { resolveConsoleConfig } = await import('../../src/console/define_config.ts')
    assert.isFunction(defineConfig)
    assert.deepEqual(resolveConsoleConfig({}).overloadProtection, {
      maxEventLoopLagMs: 200,
      startupGraceMs: 5000,
    })
    assert.throws(
      () => resolveConsoleConfig({ overloadProtection: { maxEventLoopLagMs: 0 } }),
      /overloadProtection.maxEventLoopLagMs/
    )
    assert.throws(
      () => resolveConsoleConfig({ overloadProtection: 'yes' as any }),
      /overloadProtection/
    )
  })
})
