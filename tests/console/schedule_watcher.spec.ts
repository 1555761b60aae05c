import { test } from '@japa/runner'
import type { Logger } from '@adonisjs/core/logger'
import { consoleApp } from './helpers.ts'
import { traceScheduledTask, watchers } from '../../src/console/main.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'

type Manager = Awaited<ReturnType<typeof consoleApp>>['manager']

class LedgerLocked extends Error {}

/** Every stored entry of the type, oldest first */
async function stored(manager: Manager, type: 'schedule' | 'log') {
  await manager.recorder.flush()
  const { data } = await manager.store.list({ type, limit: 50 })
  return Promise.all(data.reverse().map((entry) => manager.store.find(entry.id))) as Promise<
    ConsoleEntry[]
  >
}

test.group('Console watchers: scheduled task runs', () => {
  test('a run is an entry of its own batch, which the task’s log lines join; its result passes through', async ({
    assert,
  }) => {
    const { manager, app, api } = await consoleApp({
      config: {
        buffer: { flushIntervalMs: 60_000 },
        watchers: [watchers.schedules(), watchers.logs()],
      },
    })
    const logger: Logger = await app.container.make('logger')
    const result = await traceScheduledTask(
      { name: 'reports:send', expression: '0 8 * * *', scheduler: 'adonisjs-scheduler' },
      async () => {
        logger.info('sent 3 reports')
        return 3
      }
    )
    assert.equal(result, 3)

    const [run] = await stored(manager, 'schedule')
    assert.match(run.summary, /^task reports:send succeeded \d+ ms$/)
    assert.equal(run.batchId, run.id)
    assert.deepEqual(run.tags, ['succeeded'])
    assert.isFalse(run.slow)
    assert.deepInclude(run.content, {
      name: 'reports:send',
      expression: '0 8 * * *',
      scheduler: 'adonisjs-scheduler',
      status: 'succeeded',
      error: null,
      errorClass: null,
      stack: null,
    })
    assert.isAtMost(Date.parse(run.content.startedAt as string), Date.now())
    const batch = await manager.store.batch(run.batchId)
    assert.equal(batch.find((entry) => entry.type === 'log')?.content.message, 'sent 3 reports')

    const response = await api('/schedule-runs')
    const { data } = (await response.json()) as { data: { id: string }[] }
    assert.deepEqual(
      data.map((entry) => entry.id),
      [run.id]
    )
  })

  test('a failed run is rethrown and kept with its error, class and stack when sampling drops the rest', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({
      config: {
        buffer: { flushIntervalMs: 60_000 },
        watchers: [watchers.schedules()],
        sampling: { schedule: 0 },
        redact: { keys: ['password'] },
      },
    })
    await traceScheduledTask({ name: 'books:close' }, () => 'done')
    const failure = traceScheduledTask({ name: 'ledger:sync', expression: 'every 5m' }, () => {
      throw new LedgerLocked('ledger locked by books:close')
    })
    await assert.rejects(() => failure, LedgerLocked)

    const runs = await stored(manager, 'schedule')
    // the succeeded run was sampled out; the failed one is always kept
    assert.lengthOf(runs, 1)
    const [run] = runs
    assert.match(run.summary, /^task ledger:sync failed \d+ ms: ledger locked by books:close$/)
    assert.deepEqual(run.tags, ['failed'])
    assert.deepInclude(run.content, {
      name: 'ledger:sync',
      expression: 'every 5m',
      scheduler: null,
      status: 'failed',
      error: 'ledger locked by books:close',
      errorClass: 'LedgerLocked',
    })
    assert.match(run.content.stack as string, /^Error: ledger locked by books:close\n\s+at /)
  })

  test('a slow run is tagged and kept; a name that is not text or too long is bounded', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({
      config: {
        buffer: { flushIntervalMs: 60_000 },
        watchers: [watchers.schedules({ slowMs: 1 })],
        sampling: { schedule: 0 },
      },
    })
    await traceScheduledTask({ name: 'x'.repeat(5000), expression: 42 as any }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 5))
    })
    const [run] = await stored(manager, 'schedule')
    assert.isTrue(run.slow)
    assert.deepEqual(run.tags, ['succeeded', 'slow'])
    assert.lengthOf(run.content.name as string, 256)
    assert.equal(run.content.expression, '42')
    assert.isAtMost(run.summary.length, 255)
  })

  test('without watchers.schedules() a traced task runs and nothing is recorded', async ({
    assert,
  }) => {
    const { manager } = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    let ran = 0
    await traceScheduledTask({ name: 'cache:warm' }, () => {
      ran++
    })
    assert.equal(ran, 1)
    assert.lengthOf(await stored(manager, 'schedule'), 0)
  })
})
