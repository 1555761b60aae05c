import { test } from '@japa/runner'
import { runStub } from '../migration_stubs.ts'
import ConsoleDoctor from '../../commands/console_doctor.ts'
import ConsoleList from '../../commands/console_list.ts'
import { entryId } from '../../src/console/ids.ts'
import type { ConsoleEntry, EntryType } from '../../src/console/types.ts'
import { consoleApp } from './helpers.ts'
import { alertChannels, alertRules, defineConsoleExtension } from '../../src/console/main.ts'

const MINUTE = 60_000

function entry(
  type: EntryType,
  ageMs: number,
  content: Record<string, unknown> = {}
): ConsoleEntry {
  const createdAt = Date.now() - ageMs
  const id = entryId(createdAt)
  return {
    id,
    batchId: id,
    type,
    summary: `${type} ${ageMs / MINUTE}m`,
    status: type === 'request' ? 200 : null,
    method: type === 'request' ? 'GET' : null,
    durationMs: 1.5,
    slow: false,
    tags: [],
    createdAt,
    content,
  }
}

/** Runs an Ace command of the app in raw mode: its exit code and what it printed per stream */
async function run(
  app: Awaited<ReturnType<typeof consoleApp>>['app'],
  command: typeof ConsoleList | typeof ConsoleDoctor,
  argv: string[]
) {
  const ace = await app.container.make('ace')
  ace.ui.switchMode('raw')
  const instance = await ace.create(command, argv)
  await instance.exec()
  const logs = instance.ui.logger.getLogs()
  return {
    exitCode: instance.exitCode,
    stdout: logs.filter((log) => log.stream === 'stdout').map((log) => log.message),
    stderr: logs.filter((log) => log.stream === 'stderr').map((log) => log.message),
  }
}

test.group('console:list', () => {
  test('--json prints one JSON array of what the API lists, and nothing else on stdout', async ({
    assert,
  }) => {
    const app = await consoleApp()
    await app.manager.store.write([
      entry('request', 30 * MINUTE),
      entry('query', 20 * MINUTE, { sql: 'select 1' }),
      entry('request', 10 * MINUTE),
    ])
    const { exitCode, stdout } = await run(app.app, ConsoleList, ['--type=request', '--json'])
    assert.equal(exitCode, 0)
    assert.lengthOf(stdout, 1)
    const listed = JSON.parse(stdout[0])
    const apiResponse = await app.api('/requests')
    const api = (await apiResponse.json()) as any
    assert.deepEqual(listed, api.data)
    assert.deepEqual(
      listed.map((row: any) => row.summary),
      ['request 10m', 'request 30m']
    )
    assert.notProperty(listed[0], 'content')
  })

  test('--since takes a duration or an ISO time; --limit caps; no --type lists every type', async ({
    assert,
  }) => {
    const app = await consoleApp()
    await app.manager.store.write([
      entry('request', 180 * MINUTE),
      entry('query', 50 * MINUTE),
      entry('log', 5 * MINUTE),
      entry('request', 1 * MINUTE),
    ])
    const json = async (argv: string[]) => {
      const { stdout } = await run(app.app, ConsoleList, [...argv, '--json'])
      return JSON.parse(stdout[0]).map((row: any) => row.summary)
    }
    assert.deepEqual(await json(['--since=1h']), ['request 1m', 'log 5m', 'query 50m'])
    const iso = new Date(Date.now() - 10 * MINUTE).toISOString()
    assert.deepEqual(await json([`--since=${iso}`]), ['request 1m', 'log 5m'])
    assert.deepEqual(await json(['--limit=2']), ['request 1m', 'log 5m'])
    assert.deepEqual(await json(['--type=request', '--since=2h']), ['request 1m'])
  })

  test('--type takes an extension’s entry type; an unknown one lists them', async ({ assert }) => {
    const app = await consoleApp({
      config: {
        extensions: [defineConsoleExtension({ name: 'billing', entryTypes: ['invoice'] })],
      },
    })
    await app.manager.store.write([
      entry('invoice' as EntryType, 3 * MINUTE, { total: 42 }),
      entry('request', 2 * MINUTE),
      entry('invoice' as EntryType, MINUTE, { total: 7 }),
    ])
    const { exitCode, stdout } = await run(app.app, ConsoleList, ['--type=invoice', '--json'])
    assert.equal(exitCode, 0)
    assert.deepEqual(
      JSON.parse(stdout[0]).map((row: any) => row.summary),
      ['invoice 1m', 'invoice 3m']
    )
    const unknown = await run(app.app, ConsoleList, ['--type=receipt', '--json'])
    assert.equal(unknown.exitCode, 1)
    assert.include(unknown.stderr.join('\n'), 'Unknown --type "receipt"')
    assert.include(unknown.stderr.join('\n'), 'cpu_profile, invoice')
  })

  test('without --json prints a table; bad flags exit 1 naming the flag', async ({ assert }) => {
    const app = await consoleApp()
    await app.manager.store.write([entry('request', MINUTE)])
    const table = await run(app.app, ConsoleList, [])
    assert.equal(table.exitCode, 0)
    const printed = table.stdout.join('\n')
    assert.include(printed, 'Summary')
    assert.include(printed, 'request 1m')
    assert.include(printed, 'GET 200')

    for (const [argv, message] of [
      [['--type=nope'], 'Unknown --type "nope"'],
      [['--limit=1001'], '--limit must be a whole number from 1 to 1000'],
      [['--limit=0'], '--limit must be a whole number from 1 to 1000'],
      [['--since=yesterday-ish'], 'Invalid --since "yesterday-ish"'],
    ] as const) {
      const result = await run(app.app, ConsoleList, [...argv, '--json'])
      assert.equal(result.exitCode, 1, argv.join(' '))
      assert.lengthOf(result.stdout, 0)
      assert.include(result.stderr.join('\n'), message)
    }
  })
})

test.group('console:doctor', () => {
  test('a working setup exits 0 and reports gates, storage, retention, recorder and watchers', async ({
    assert,
  }) => {
    const app = await consoleApp({
      config: { prune: { after: '24h', perType: { query: '6h' } }, authorizeAction: () => true },
    })
    const { exitCode, stdout } = await run(app.app, ConsoleDoctor, [])
    assert.equal(exitCode, 0)
    const printed = stdout.join('\n')
    assert.include(printed, 'reads open (not production, no authorizer)')
    assert.include(printed, 'authorizer: not set; authorizeAction: set; mcp: off')
    assert.include(printed, 'Storage: database, connection ')
    assert.include(printed, '; ready')
    assert.include(printed, 'Retention: after 24h, query after 6h; pruned every 5m, lock lease row')
    assert.include(printed, 'Watchers: requests, exceptions')
    assert.include(printed, 'Alerts: off')
    assert.include(
      printed,
      'Queues: none; schedule managers: 0; extensions: none; AI diagnosis: off'
    )
    assert.include(printed, 'No problem found')

    const json = await run(app.app, ConsoleDoctor, ['--json'])
    assert.equal(json.exitCode, 0)
    assert.lengthOf(json.stdout, 1)
    const report = JSON.parse(json.stdout[0])
    assert.isTrue(report.ok)
    assert.isTrue(report.storage.ready)
    assert.equal(report.storage.driver, 'database')
    assert.equal(report.retention.afterMs, 24 * 3600_000)
    assert.equal(report.retention.intervalMs, 300_000)
    assert.deepEqual(report.retention.archived, [])
    assert.equal(report.recorder.state, 'running')
    if (process.env.DB === undefined || process.env.DB === 'sqlite') {
      assert.match(report.storage.file, /\.sqlite3?$|\.db$/)
    }
  })

  test('alerts, queue and schedule managers and extensions are reported by name', async ({
    assert,
  }) => {
    const queue = {
      driver: 'orders',
      init() {},
      listQueues: () => ['default'],
      counts: () => ({}),
      listJobs: () => ({ jobs: [], nextCursor: null }),
      getJob: () => null,
    }
    const app = await consoleApp({
      config: {
        alerts: {
          channels: [alertChannels.webhook({ url: 'https://hooks.example.com/T01' })],
          rules: [alertRules.exceptions({ over: 2, within: '5m' })],
        },
        queueManagers: [queue],
        scheduleManagers: [{ listTasks: () => [] }],
        extensions: [defineConsoleExtension({ name: 'billing' })],
      },
    })
    const { stdout } = await run(app.app, ConsoleDoctor, [])
    const printed = stdout.join('\n')
    assert.match(printed, /Alerts: exceptions to webhook, checked every /)
    assert.include(
      printed,
      'Queues: orders; schedule managers: 1; extensions: billing; AI diagnosis: off'
    )
    const json = await run(app.app, ConsoleDoctor, ['--json'])
    const report = JSON.parse(json.stdout[0])
    assert.deepEqual(report.alerts.rules, ['exceptions'])
    assert.deepEqual(report.managers, { queues: ['orders'], schedules: 1 })
    assert.deepEqual(report.extensions, ['billing'])
    assert.isNull(report.ai)
  })

  test('a missing table exits 1 naming the migration', async ({ assert }) => {
    const app = await consoleApp()
    await app.db.connection().schema.dropTable('console_entries')
    const { exitCode, stderr } = await run(app.app, ConsoleDoctor, [])
    assert.equal(exitCode, 1)
    assert.include(stderr.join('\n'), 'table "console_entries" is missing')
    assert.include(stderr.join('\n'), 'node ace migration:run')
    const again = await run(app.app, ConsoleDoctor, ['--json'])
    const json = JSON.parse(again.stdout[0])
    assert.isFalse(json.ok)
    assert.isFalse(json.storage.ready)
  })

  test('a missing rollups or leases table or search migration exits 1 naming what to run', async ({
    assert,
  }) => {
    const app = await consoleApp()
    await runStub(app.db, 'console_entries_search', 'down')
    await app.db.connection().schema.dropTable('console_rollups')
    await app.db.connection().schema.dropTable('console_leases')
    const { exitCode, stdout } = await run(app.app, ConsoleDoctor, ['--json'])
    assert.equal(exitCode, 1)
    const report = JSON.parse(stdout[0])
    assert.isTrue(report.storage.ready)
    assert.isFalse(report.storage.rollups)
    assert.isFalse(report.storage.search)
    assert.isFalse(report.storage.leases)
    assert.lengthOf(report.problems, 3)
    assert.include(report.problems[0], 'table "console_rollups" is missing')
    assert.include(report.problems[1], 'the console_entries_search migration has not run')
    assert.include(report.problems[2], 'table "console_leases" is missing, so every prune fails')
  })

  test('production without authorizer exits 1; a watcher whose package is missing is named', async ({
    assert,
  }) => {
    const production = await consoleApp({ production: true })
    const denied = await run(production.app, ConsoleDoctor, ['--json'])
    assert.equal(denied.exitCode, 1)
    const report = JSON.parse(denied.stdout[0])
    assert.include(report.problems[0], 'production without "authorizer" or "dashboardAuth"')

    const app = await consoleApp({ config: { authorizer: () => true } })
    app.manager.config.watchers.push({
      name: 'cache',
      package: 'atrium-package-that-is-not-installed',
      options: {},
    })
    const missing = await run(app.app, ConsoleDoctor, [])
    assert.equal(missing.exitCode, 1)
    assert.include(
      missing.stdout.join('\n'),
      'cache (atrium-package-that-is-not-installed MISSING)'
    )
    assert.include(missing.stderr.join('\n'), 'npm install atrium-package-that-is-not-installed')
  })

  test('a watcher whose package is not installed stops the boot naming it', async ({ assert }) => {
    await assert.rejects(
      () =>
        consoleApp({
          config: {
            watchers: [
              { name: 'cache', package: 'atrium-package-that-is-not-installed', options: {} },
            ],
          },
        }),
      /watchers\.cache\(\) in config\/console\.ts needs "atrium-package-that-is-not-installed"/
    )
  })
})
