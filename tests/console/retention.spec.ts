import { test } from '@japa/runner'
import ConsolePrune from '../../commands/console_prune.ts'
import { resolveConsoleConfig } from '../../src/console/define_config.ts'
import { entryId } from '../../src/console/ids.ts'
import {
  PRUNE_LEASE,
  PRUNED_THIS_CYCLE,
  PruneScheduler,
} from '../../src/console/retention/schedule.ts'
import { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import type { ConsoleConfig, ConsoleEntry, EntryType } from '../../src/console/types.ts'
import { createDatabase } from '../helpers.ts'
import { consoleApp } from './helpers.ts'

const HOUR = 3600_000

function entry(type: EntryType, ageMs: number, summary = `${type} ${ageMs}`): ConsoleEntry {
  const createdAt = Date.now() - ageMs
  const id = entryId(createdAt)
  return {
    id,
    batchId: id,
    type,
    summary,
    status: null,
    method: null,
    durationMs: null,
    slow: false,
    tags: [],
    createdAt,
    content: { note: summary },
  }
}

async function retentionApp(config: ConsoleConfig, entries: ConsoleEntry[]) {
  const app = await consoleApp({ config })
  await app.manager.store.write(entries)
  const remaining = async () => {
    const rows = await app.db.connection().from('console_entries').select('summary').orderBy('id')
    return rows.map((row: any) => row.summary as string)
  }
  return { ...app, remaining }
}

/** A promise and the function that settles it */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

test.group('Console retention: the prune lock', () => {
  test('ten instances pruning at once: one prunes, nine are told another prune holds the lock', async ({
    assert,
  }) => {
    const held = gate()
    const release = gate()
    const archived: string[] = []
    const app = await retentionApp(
      {
        prune: { after: '1h', batchPauseMs: 0 },
        archive: {
          types: ['request'],
          async sink(entries) {
            archived.push(...entries.map((item) => item.summary))
            held.open()
            await release.opened
          },
        },
      },
      [entry('request', 3 * HOUR, 'old'), entry('request', 60_000, 'new')]
    )
    // nine more app instances: their own database clients, the same tables
    const others = await Promise.all(
      Array.from({ length: 9 }, async () => {
        const store = new LucidConsoleStore(await createDatabase(), undefined, {
          writerThread: false,
        })
        return new PruneScheduler(store, app.manager.config.prune)
      })
    )
    const first = app.manager.prune()
    await held.opened
    const outcomes = await Promise.allSettled(others.map((scheduler) => scheduler.prune()))
    release.open()
    assert.deepEqual(await first, { request: 1, rollups: 1 })
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected')
      assert.equal((outcome as PromiseRejectedResult).reason.code, 'E_CONSOLE_PRUNE_BUSY')
    }
    assert.deepEqual(archived, ['old'])
    assert.deepEqual(await app.remaining(), ['new'])
    // the lock was given back: the next prune runs (and finds nothing left)
    assert.deepEqual(await others[0].prune(), {})
  })

  test('a fleet prunes once per interval: after one instance prunes, the others skip that cycle', async ({
    assert,
  }) => {
    const app = await retentionApp({ prune: { after: '1h', intervalMs: 60_000 } }, [
      entry('request', 3 * HOUR, 'old'),
    ])
    const other = new PruneScheduler(
      new LucidConsoleStore(await createDatabase(), undefined, { writerThread: false }),
      app.manager.config.prune
    )
    assert.deepEqual(await app.manager.pruner.prune(undefined, true), { request: 1, rollups: 1 })
    const lease = await app.db.connection().from('console_leases').first()
    assert.equal(lease.owner, PRUNED_THIS_CYCLE)
    await app.manager.store.write([entry('request', 2 * HOUR, 'older than an hour')])
    // the other instance's timer fires within the same interval: its prune skips
    await assert.rejects(() => other.prune(undefined, true), /Another process is pruning/)
    assert.deepEqual(await app.remaining(), ['older than an hour'])
    // asked for by hand (console:prune, POST /prune), a prune still runs
    assert.deepEqual(await other.prune(), { request: 1, rollups: 1 })
    // once the interval is over, the next scheduled prune runs again
    await app.db
      .connection()
      .from('console_leases')
      .update({ expires_at: Date.now() - 1 })
    assert.deepEqual(await other.prune(undefined, true), {})
  })

  test('ten instances racing for a free lease: exactly one gets it', async ({ assert }) => {
    const app = await retentionApp({ prune: { after: '1h' } }, [])
    const stores = await Promise.all(
      Array.from(
        { length: 10 },
        async () =>
          new LucidConsoleStore(await createDatabase(), undefined, { writerThread: false })
      )
    )
    const expiresAt = Date.now() + 60_000
    const taken = await Promise.all(
      stores.map((store, index) =>
        store.acquireLease({ name: PRUNE_LEASE, owner: `owner-${index}`, expiresAt })
      )
    )
    assert.equal(taken.filter(Boolean).length, 1)
    const row = await app.db.connection().from('console_leases').where('name', PRUNE_LEASE).first()
    assert.equal(row.owner, `owner-${taken.indexOf(true)}`)
  })

  test('an expired lease is taken over; a live one is not; only its owner releases it', async ({
    assert,
  }) => {
    const app = await retentionApp({}, [])
    const store = app.manager.store
    const lease = { name: 'job', owner: 'a', expiresAt: Date.now() + 60_000 }
    assert.isTrue(await store.acquireLease(lease))
    assert.isFalse(await store.acquireLease({ ...lease, owner: 'b' }))
    await store.releaseLease('job', 'b')
    assert.isFalse(
      await store.acquireLease({ ...lease, owner: 'b' }),
      'b cannot release a lease of a'
    )
    await app.db
      .connection()
      .from('console_leases')
      .update({ expires_at: Date.now() - 1 })
    assert.isTrue(await store.acquireLease({ ...lease, owner: 'b' }), 'an expired lease is free')
    await store.releaseLease('job', 'b')
    assert.isTrue(await store.acquireLease({ ...lease, owner: 'c' }), 'a released lease is free')
  })

  test('without the console_leases table a prune fails naming the migration; lock: false prunes', async ({
    assert,
  }) => {
    const app = await retentionApp({ prune: { after: '1h' } }, [entry('request', 3 * HOUR)])
    await app.db.connection().schema.dropTable('console_leases')
    const error = await app.manager.prune().catch((caught) => caught)
    assert.equal(error.code, 'E_CONSOLE_LEASES_MISSING')
    assert.include(error.message, 'node ace migration:run')
    assert.lengthOf(await app.remaining(), 1)

    const unlocked = new PruneScheduler(app.manager.store, {
      ...app.manager.config.prune,
      lock: false,
    })
    assert.deepEqual(await unlocked.prune(), { request: 1, rollups: 1 })
  })

  test('a prune lock of the app own is used instead of the lease row', async ({ assert }) => {
    const calls: string[] = []
    const app = await retentionApp(
      {
        prune: {
          after: '1h',
          lockTtlMs: 90_000,
          lock: {
            async acquire(name, ttlMs) {
              calls.push(`acquire ${name} ${ttlMs}`)
              return calls.length > 2 ? null : async () => void calls.push('release')
            },
          },
        },
      },
      [entry('request', 3 * HOUR)]
    )
    assert.deepEqual(await app.manager.prune(), { request: 1, rollups: 1 })
    assert.deepEqual(calls, [`acquire ${PRUNE_LEASE} 90000`, 'release'])
    await assert.rejects(() => app.manager.prune(), /Another process is pruning/)
  })
})

test.group('Console retention: archive', () => {
  test('the sink gets each batch oldest first, and only what it took is deleted', async ({
    assert,
  }) => {
    const batches: { type: string; summaries: string[]; notes: unknown[] }[] = []
    const app = await retentionApp(
      {
        prune: { after: '1h', batchSize: 2, batchPauseMs: 0 },
        archive: {
          types: ['request'],
          sink(entries, type) {
            batches.push({
              type,
              summaries: entries.map((item) => item.summary),
              notes: entries.map((item) => item.content.note),
            })
          },
        },
      },
      [
        entry('request', 5 * HOUR, 'r1'),
        entry('request', 4 * HOUR, 'r2'),
        entry('request', 3 * HOUR, 'r3'),
        entry('query', 3 * HOUR, 'q-old'),
        entry('request', 60_000, 'r-new'),
      ]
    )
    const deleted = await app.manager.prune()
    assert.deepEqual(deleted, { request: 3, query: 1, rollups: 3 })
    assert.deepEqual(batches, [
      { type: 'request', summaries: ['r1', 'r2'], notes: ['r1', 'r2'] },
      { type: 'request', summaries: ['r3'], notes: ['r3'] },
    ])
    assert.deepEqual(await app.remaining(), ['r-new'])
  })

  test('a sink that throws stops the prune, keeps its entries and is reported by the API and the command', async ({
    assert,
  }) => {
    let failures = 1
    const app = await retentionApp(
      {
        authorizeAction: () => true,
        prune: { after: '1h', batchPauseMs: 0 },
        archive: {
          sink() {
            if (failures-- > 0) throw new Error('bucket unreachable')
          },
        },
      },
      [entry('request', 3 * HOUR, 'old'), entry('request', 60_000, 'new')]
    )
    const response = await app.api('/prune', { method: 'POST' })
    assert.equal(response.status, 500)
    const body = (await response.json()) as { errors: { code: string; message: string }[] }
    assert.equal(body.errors[0].code, 'E_CONSOLE_ARCHIVE_FAILED')
    assert.include(body.errors[0].message, 'stay stored for the next prune')
    // the sink's own words may hold a URL with credentials: the log has them, the client does not
    assert.notInclude(JSON.stringify(body), 'bucket unreachable')
    assert.deepEqual(await app.remaining(), ['old', 'new'])

    // the next prune hands the same entries over again, and deletes them once the sink takes them
    const ace = await app.app.container.make('ace')
    ace.ui.switchMode('raw')
    const command = await ace.create(ConsolePrune, [])
    await command.exec()
    assert.equal(command.exitCode, 0)
    assert.deepEqual(await app.remaining(), ['new'])
  })
})

test.group('Console retention: the schedule', () => {
  test('with prune.intervalMs each instance prunes by itself', async ({ assert }) => {
    const app = await retentionApp({ prune: { after: '1h', intervalMs: 1000 } }, [
      entry('request', 3 * HOUR, 'old'),
      entry('request', 60_000, 'new'),
    ])
    // no prune was asked: the scheduled one deletes the old entry
    let left = await app.remaining()
    while (left.includes('old')) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      left = await app.remaining()
    }
    assert.deepEqual(left, ['new'])
  }).timeout(15_000)

  test('defaults: a 5-minute schedule when a rule is set, none without rules or with false', ({
    assert,
  }) => {
    const ruled = resolveConsoleConfig({ prune: { after: '24h' } }).prune
    assert.equal(ruled.intervalMs, 300_000)
    assert.equal(ruled.lockTtlMs, 900_000)
    assert.equal(ruled.lock, 'storage')
    const often = resolveConsoleConfig({ prune: { maxRows: 10, intervalMs: 10_000 } }).prune
    assert.equal(often.intervalMs, 10_000)
    assert.equal(often.lockTtlMs, 60_000)
    assert.isUndefined(resolveConsoleConfig({}).prune.intervalMs)
    const off = resolveConsoleConfig({ prune: { after: '24h', intervalMs: false } })
    assert.isUndefined(off.prune.intervalMs)
  })

  test('invalid schedule, lock and archive options are boot errors naming the key', ({
    assert,
  }) => {
    const resolve = (config: unknown) => () => resolveConsoleConfig(config as ConsoleConfig)
    assert.throws(resolve({ prune: { after: '1h', intervalMs: 10 } }), /prune\.intervalMs/)
    assert.throws(resolve({ prune: { lock: 'redis' } }), /prune\.lock/)
    assert.throws(resolve({ prune: { lockTtlMs: -1 } }), /prune\.lockTtlMs/)
    assert.throws(resolve({ archive: { sink: 'bucket' } }), /"archive"/)
    assert.throws(resolve({ archive: { sink() {}, types: ['requests'] } }), /archive\.types/)
  })
})
