import { test } from '@japa/runner'
import ConsolePrune from '../../commands/console_prune.ts'
import { entryId } from '../../src/console/ids.ts'
import type { ConsoleConfig, ConsoleEntry, EntryType } from '../../src/console/types.ts'
import { consoleApp } from './helpers.ts'

const HOUR = 3600_000

function entry(type: EntryType, ageMs: number): ConsoleEntry {
  const createdAt = Date.now() - ageMs
  const id = entryId(createdAt)
  return {
    id,
    batchId: id,
    type,
    summary: `${type} ${ageMs}`,
    status: null,
    method: null,
    durationMs: null,
    slow: false,
    tags: [],
    createdAt,
    content: {},
  }
}

async function pruneApp(config: ConsoleConfig, entries: ConsoleEntry[]) {
  const app = await consoleApp({ config })
  await app.manager.store.write(entries)
  const remaining = async () => {
    const rows = await app.db
      .connection()
      .from('console_entries')
      .select('type', 'summary')
      .orderBy('id')
    return rows.map((row: any) => row.summary)
  }
  return { ...app, remaining }
}

test.group('Console retention', () => {
  test('prune deletes entries older than prune.after, per type cutoffs first', async ({
    assert,
  }) => {
    const { manager, remaining } = await pruneApp(
      { prune: { after: '24h', perType: { query: '30m' } } },
      [
        entry('request', 48 * HOUR),
        entry('query', 47 * HOUR),
        entry('request', 1 * HOUR),
        entry('query', 1 * HOUR),
        entry('query', 60_000),
      ]
    )
    const deleted = await manager.prune()
    // the old request's minute of rollups goes with it (the request cutoff by default)
    assert.deepEqual(deleted, { request: 1, query: 2, rollups: 1 })
    assert.deepEqual(await remaining(), [`request ${HOUR}`, 'query 60000'])
  })

  test('prune keeps only the newest maxRows of a type', async ({ assert }) => {
    const entries = [5, 4, 3, 2, 1].map((hours) => entry('request', hours * HOUR))
    const { manager, remaining } = await pruneApp({ prune: { maxRows: { request: 2 } } }, [
      ...entries,
      entry('query', 10 * HOUR),
    ])
    assert.deepEqual(await manager.prune(), { request: 3 })
    assert.deepEqual(await remaining(), [
      `query ${10 * HOUR}`,
      `request ${2 * HOUR}`,
      `request ${HOUR}`,
    ])
  })

  test('prune deletes in bounded batches: at most batchSize x maxBatchesPerCycle rows a run', async ({
    assert,
  }) => {
    const entries = Array.from({ length: 7 }, (_, index) => entry('query', (30 + index) * HOUR))
    const { manager, remaining } = await pruneApp(
      { prune: { after: '1h', batchSize: 2, maxBatchesPerCycle: 2, batchPauseMs: 0 } },
      entries
    )
    assert.deepEqual(await manager.prune(), { query: 4 })
    assert.lengthOf(await remaining(), 3)
    assert.deepEqual(await manager.prune(), { query: 3 })
    assert.lengthOf(await remaining(), 0)
  })

  test('console:prune runs the configured retention', async ({ assert }) => {
    const app = await pruneApp({ prune: { after: '2h' } }, [
      entry('exception', 3 * HOUR),
      entry('exception', HOUR),
    ])
    const ace = await app.app.container.make('ace')
    ace.ui.switchMode('raw')
    const command = await ace.create(ConsolePrune, [])
    await command.exec()
    assert.equal(command.exitCode, 0)
    const logs = command.ui.logger.getLogs().map((log: { message: string }) => log.message)
    assert.include(logs.join('\n'), 'Pruned 1 console entries (exception: 1)')
    assert.deepEqual(await app.remaining(), [`exception ${HOUR}`])
  })

  test('console:prune without retention settings says so and deletes nothing', async ({
    assert,
  }) => {
    const app = await pruneApp({}, [entry('request', 100 * HOUR)])
    const ace = await app.app.container.make('ace')
    ace.ui.switchMode('raw')
    const command = await ace.create(ConsolePrune, [])
    await command.exec()
    const logs = command.ui.logger.getLogs().map((log: { message: string }) => log.message)
    assert.include(logs.join('\n'), 'Nothing to prune')
    assert.lengthOf(await app.remaining(), 1)
  })

  test('POST /prune runs retention when authorizeAction allows it', async ({ assert }) => {
    const app = await pruneApp({ prune: { after: '2h' }, authorizeAction: () => true }, [
      entry('request', 3 * HOUR),
      entry('request', HOUR),
    ])
    const response = await app.api('/prune', { method: 'POST' })
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { data: { deleted: { request: 1, rollups: 1 } } })
    assert.deepEqual(await app.remaining(), [`request ${HOUR}`])
  })

  test('a flush that cannot write counts the entries as failed and warns once', async ({
    assert,
  }) => {
    const app = await consoleApp({ config: { buffer: { flushIntervalMs: 60_000 } } })
    await app.db.connection().schema.dropTable('console_entries')
    await fetch(`${app.url}/nowhere`)
    await fetch(`${app.url}/nowhere`)
    await app.manager.recorder.flush()
    await fetch(`${app.url}/nowhere`)
    await app.manager.recorder.flush()
    assert.equal(app.manager.recorder.failed, 3)
    assert.equal(app.manager.recorder.written, 0)
    assert.equal(app.warnings.filter((line) => line.includes('could not write')).length, 1)
  })
})
