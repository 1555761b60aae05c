import { test } from '@japa/runner'
import { setTimeout as delay } from 'node:timers/promises'
import { consoleApp, SECRET } from './helpers.ts'
import { onDiagnostic, type DiagnosticMessage } from '../../src/shared/diagnostics.ts'
import { alertChannels, alertRules, CONSOLE_EVENTS, watchers } from '../../src/console/main.ts'

/** Every `atrium:console:<event>` message published until the test ends */
function consoleEvents(cleanup: (handler: () => void) => void) {
  const seen: DiagnosticMessage<any>[] = []
  const unsubscribes = CONSOLE_EVENTS.map((event) =>
    onDiagnostic('console', event, (message) => {
      seen.push(message)
    })
  )
  cleanup(() => unsubscribes.forEach((unsubscribe) => unsubscribe()))
  return seen
}

const LOGIN = { 'content-type': 'application/json' }

test.group('Console | the console’s own events', () => {
  test('sign-ins publish session.opened and session.denied without the credentials', async ({
    assert,
    cleanup,
  }) => {
    const seen = consoleEvents(cleanup)
    let broken = false
    const { api } = await consoleApp({
      config: {
        dashboardAuth: {
          secret: SECRET,
          login: (username, password) => {
            if (broken) throw new Error('directory down')
            return username === 'ada' && password === 'lovelace-pw-1'
              ? { id: 'user-1', roles: ['admin'] }
              : null
          },
        },
      },
    })
    const attempt = async (password: string) => {
      const response = await api('/auth/login', {
        method: 'POST',
        headers: LOGIN,
        body: JSON.stringify({ username: 'ada', password }),
      })
      return response.status
    }
    assert.equal(await attempt('wrong-pw-2'), 401)
    assert.equal(await attempt('lovelace-pw-1'), 204)
    broken = true
    assert.equal(await attempt('lovelace-pw-1'), 401)

    assert.deepEqual(
      seen.map((message) => [message.feature, message.event, message.payload]),
      [
        ['console', 'session.denied', { mode: 'login', reason: 'rejected', ip: '127.0.0.1' }],
        ['console', 'session.opened', { mode: 'login', userId: 'user-1' }],
        ['console', 'session.denied', { mode: 'login', reason: 'hook_failed', ip: '127.0.0.1' }],
      ]
    )
    const published = JSON.stringify(seen)
    assert.notInclude(published, 'pw-')
    assert.notInclude(published, 'ada')
  })

  test('a refused mutation publishes action.denied; a prune publishes what it deleted', async ({
    assert,
    cleanup,
  }) => {
    const seen = consoleEvents(cleanup)
    const { api, manager } = await consoleApp()
    const refused = await api('/prune', { method: 'POST' })
    assert.equal(refused.status, 403)
    assert.deepEqual(seen[0].event, 'action.denied')
    assert.deepEqual(seen[0].payload, { action: 'prune', userId: null, ip: '127.0.0.1' })

    const deleted = await manager.prune()
    const pruned = seen.find((message) => message.event === 'prune.completed')!
    assert.deepEqual(pruned.payload.deleted, deleted)
    assert.isFalse(pruned.payload.scheduled)
    assert.isAtLeast(pruned.payload.durationMs, 0)
  })

  test('alerts publish alert.fired and alert.resolved with the payload channels get', async ({
    assert,
    cleanup,
  }) => {
    const seen = consoleEvents(cleanup)
    let holding = true
    const { manager } = await consoleApp({
      config: {
        alerts: {
          channels: [alertChannels.log()],
          rules: [
            alertRules.custom({
              name: 'disk',
              check: () =>
                holding
                  ? [{ subject: 'db-1', value: 0.97, threshold: 0.9, summary: 'db-1 disk 97%' }]
                  : [],
            }),
          ],
        },
      },
    })
    const now = Date.now()
    const [fired] = await manager.alerts!.evaluate(now)
    holding = false
    const [resolved] = await manager.alerts!.evaluate(now + 60_000)
    const alerts = seen.filter((message) => message.event.startsWith('alert.'))
    assert.deepEqual(
      alerts.map((message) => message.event),
      ['alert.fired', 'alert.resolved']
    )
    assert.deepEqual(alerts[0].payload, fired)
    assert.deepEqual(alerts[1].payload, resolved)
    assert.equal(alerts[0].payload.summary, 'db-1 disk 97%')
  })

  test('a full buffer publishes recorder.dropped; a refused write publishes recorder.write_failed without its message', async ({
    assert,
    cleanup,
  }) => {
    const seen = consoleEvents(cleanup)
    const { url, manager } = await consoleApp({
      config: { buffer: { maxEntries: 1, flushAt: 100, flushIntervalMs: 60_000 } },
      routes(router) {
        router.get('/ping', () => 'pong')
      },
    })
    await fetch(`${url}/ping`)
    await fetch(`${url}/ping`)
    const dropped = seen.find((message) => message.event === 'recorder.dropped')!
    assert.deepEqual(dropped.payload, { entries: 1, droppedTotal: 1 })

    class RowRefused extends Error {
      code = 'E_ROW_REFUSED'
    }
    manager.store.write = async () => {
      throw new RowRefused('duplicate key value (email)=(ada@example.com)')
    }
    await manager.recorder.flush()
    const failed = seen.find((message) => message.event === 'recorder.write_failed')!
    assert.deepEqual(failed.payload, {
      entries: 1,
      failedTotal: 1,
      error: { name: 'RowRefused', code: 'E_ROW_REFUSED' },
    })
    assert.notInclude(JSON.stringify(seen), 'ada@example.com')
  })

  test('overload protection publishes recorder.paused and recorder.resumed', async ({
    assert,
    cleanup,
  }) => {
    const seen = consoleEvents(cleanup)
    const { manager } = await consoleApp({
      config: { overloadProtection: { maxEventLoopLagMs: 100, startupGraceMs: 0 } },
    })
    const monitor = manager.overload!
    monitor.detachTimer()
    monitor.sample()
    // several busy turns: the delay histogram sees a task's lag from the next turn on
    for (let turn = 0; turn < 4; turn++) {
      const until = Date.now() + 200
      while (Date.now() < until) {
        // spin
      }
      await new Promise((resolve) => setImmediate(resolve))
    }
    await delay(30)
    monitor.sample()
    assert.isTrue(manager.recorder.paused)
    const paused = seen.find((message) => message.event === 'recorder.paused')!
    assert.equal(paused.payload.maxEventLoopLagMs, 100)
    assert.isAbove(paused.payload.eventLoopLagP99Ms, 100)

    for (let calm = 0; calm < 20 && manager.recorder.paused; calm++) {
      await delay(30)
      monitor.sample()
    }
    assert.isFalse(manager.recorder.paused)
    const resumed = seen.find((message) => message.event === 'recorder.resumed')!
    assert.isBelow(resumed.payload.eventLoopLagP99Ms, 50)
    assert.isAtLeast(resumed.payload.pausedMs, 0)
  })

  test('watchers.features() does not record the console’s own events', async ({
    assert,
    cleanup,
  }) => {
    const seen = consoleEvents(cleanup)
    const { api, manager } = await consoleApp({
      config: { watchers: [watchers.features()], buffer: { flushIntervalMs: 60_000 } },
    })
    const refused = await api('/prune', { method: 'POST' })
    assert.equal(refused.status, 403)
    await manager.prune()
    assert.isAtLeast(seen.length, 2)
    await manager.recorder.flush()
    const { data } = await manager.store.list({ type: 'feature', limit: 10 })
    assert.lengthOf(data, 0)
  })
})
