import { spawn } from 'node:child_process'
import { mkdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { createRequire, registerHooks } from 'node:module'
import { test } from '@japa/runner'
import ConsoleDoctor from '../../commands/console_doctor.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import type { ApplicationService } from '@adonisjs/core/types'
import type { ConsoleConfig } from '../../src/console/types.ts'
import { createDatabase, setupApp } from '../helpers.ts'
import { dropStubTables, MIGRATION_STUBS } from '../migration_stubs.ts'

/** The parts of better-sqlite3 (untyped) the checks use */
interface SqliteFile {
  prepare(sql: string): { all(): unknown[] }
  exec(sql: string): void
  pragma(sql: string, options: { simple: true }): unknown
  close(): void
}
const Sqlite = createRequire(import.meta.url)('better-sqlite3') as new (
  file: string,
  options?: { readonly?: boolean; fileMustExist?: boolean }
) => SqliteFile

const CONSOLE_TABLES = ['console_entries', 'console_rollups', 'console_leases']

/**
 * An app on the selected database whose config/console.ts uses the embedded
 * store, with no `console` connection in config/database.ts. The same test
 * boots it again on the same folder to restart it.
 */
async function embeddedApp(
  options: {
    config?: ConsoleConfig
    environment?: 'console'
    providers?: (() => Promise<any>)[]
    /** Drops console tables left on the app's database by earlier tests (default true) */
    cleanDatabase?: boolean
    production?: boolean
  } = {}
) {
  const { config = {}, environment, providers = [] } = options
  // the app's own database starts without console tables, whatever ran before on it
  if (options.cleanDatabase !== false) await dropStubTables(await createDatabase(), 'console')
  const previous = process.env.NODE_ENV
  if (options.production) process.env.NODE_ENV = 'production'
  try {
    return await bootApp(config, environment, providers)
  } finally {
    process.env.NODE_ENV = previous
  }
}

function bootApp(
  config: ConsoleConfig,
  environment: 'console' | undefined,
  providers: (() => Promise<any>)[]
) {
  return setupApp({
    database: true,
    environment,
    providers: [...providers, () => import('../../providers/console_provider.ts')],
    config: {
      console: defineConfig({
        storage: stores.embedded(),
        overloadProtection: false,
        buffer: { flushIntervalMs: 60_000 },
        ...config,
      }),
    },
    routes: (router) => {
      router.get('/orders/:id', ({ params }) => ({ id: params.id }))
    },
  })
}

/** Runs `console:doctor --json` in the app: its exit code and report */
async function doctor(app: ApplicationService) {
  const ace = await app.container.make('ace')
  ace.ui.switchMode('raw')
  const command = await ace.create(ConsoleDoctor, ['--json'])
  await command.exec()
  const logs = command.ui.logger.getLogs().filter((log) => log.stream === 'stdout')
  return { exitCode: command.exitCode, report: JSON.parse(logs[0].message) }
}

/**
 * Defines a `console` connection before the console boots, as
 * config/database.ts would: the app's own database under that name.
 */
class AppConsoleConnectionProvider {
  constructor(protected app: ApplicationService) {}
  async boot() {
    const db = await this.app.container.make('lucid.db')
    db.manager.add('console', db.manager.get(db.primaryConnectionName)!.config)
  }
}

const MIGRATOR = new URL('./fixtures/embedded_migrator.ts', import.meta.url).pathname

/**
 * A process about to boot on the embedded file of `directory`: `ready` once
 * it is loaded, `go()` starts its boot migration, `done` has its exit code,
 * the stubs it ran and its stderr.
 */
function migrator(directory: string) {
  const child = spawn(process.execPath, ['--import=@poppinss/ts-exec', MIGRATOR, directory], {
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  let onReady: () => void
  const ready = new Promise<void>((resolve) => (onReady = resolve))
  child.stdout.on('data', (chunk) => {
    stdout += chunk
    if (stdout.startsWith('ready\n')) onReady()
  })
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const done = new Promise<{ code: number | null; ran: string[]; stderr: string }>((resolve) =>
    child.once('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? ''
      resolve({ code, ran: last.startsWith('[') ? JSON.parse(last) : [], stderr })
    })
  )
  return { ready, done, go: () => child.stdin.end('go\n') }
}

/** Reads the console's file directly, as another process would */
function readFile(file: string) {
  const sqlite = new Sqlite(file, { readonly: true, fileMustExist: true })
  try {
    const requests = sqlite
      .prepare("SELECT summary FROM console_entries WHERE type = 'request' ORDER BY id")
      .all() as { summary: string }[]
    const migrations = sqlite
      .prepare('SELECT name FROM console_migrations ORDER BY name')
      .all() as {
      name: string
    }[]
    return {
      requests: requests.map((row) => row.summary),
      migrations: migrations.map((row) => row.name),
      journal: sqlite.pragma('journal_mode', { simple: true }),
      autoVacuum: sqlite.pragma('auto_vacuum', { simple: true }),
    }
  } finally {
    sqlite.close()
  }
}

test.group('Console embedded store', () => {
  test('requests land in tmp/console.sqlite3 and survive a restart; the app database gets no console table', async ({
    assert,
  }) => {
    const first = await embeddedApp()
    const file = first.app.tmpPath('console.sqlite3')
    const response = await fetch(`${first.url}/orders/1`)
    assert.equal(response.status, 200)
    const manager = await first.app.container.make('atrium.console')
    await manager.recorder.flush()

    let stored = readFile(file)
    assert.lengthOf(stored.requests, 1)
    assert.include(stored.requests[0], '/orders/1')
    assert.sameMembers(stored.migrations, [...MIGRATION_STUBS.console])
    assert.equal(stored.journal, 'wal')
    // 2 is INCREMENTAL: a prune gives its pages back to the disk
    assert.equal(stored.autoVacuum, 2)
    await first.close()

    const second = await embeddedApp()
    assert.equal(second.app.tmpPath('console.sqlite3'), file)
    const restarted = await second.app.container.make('atrium.console')
    const before = await restarted.store.list({ type: 'request', limit: 10 })
    assert.lengthOf(before.data, 1, "the first run's entry is read back after the restart")
    const again = await fetch(`${second.url}/orders/2`)
    assert.equal(again.status, 200)
    await restarted.recorder.flush()

    stored = readFile(file)
    assert.lengthOf(stored.requests, 2)
    assert.include(stored.requests[1], '/orders/2')
    // the restart ran no stub twice: each is recorded once
    assert.lengthOf(stored.migrations, MIGRATION_STUBS.console.length)

    const db = await second.app.container.make('lucid.db')
    for (const table of [...CONSOLE_TABLES, 'console_migrations']) {
      assert.isFalse(await db.connection().schema.hasTable(table), table)
    }
  }).timeout(60_000)

  test('a file missing a later migration gets it at the next boot, its entries kept', async ({
    assert,
  }) => {
    const first = await embeddedApp()
    const file = first.app.tmpPath('console.sqlite3')
    const manager = await first.app.container.make('atrium.console')
    await fetch(`${first.url}/orders/7`)
    await manager.recorder.flush()
    await first.close()

    // as a file created before console_leases existed
    const sqlite = new Sqlite(file)
    sqlite.exec(
      "DROP TABLE console_leases; DELETE FROM console_migrations WHERE name = 'console_leases'"
    )
    sqlite.close()

    const second = await embeddedApp()
    const db = await second.app.container.make('lucid.db')
    assert.isTrue(await db.connection('console').schema.hasTable('console_leases'))
    assert.lengthOf(readFile(file).requests, 1)
    assert.lengthOf(readFile(file).migrations, MIGRATION_STUBS.console.length)
  }).timeout(60_000)

  test('console:doctor reports the embedded file, its size and its tables', async ({ assert }) => {
    const app = await embeddedApp({
      config: { authorizeAction: () => true },
      environment: 'console',
    })
    const { exitCode, report } = await doctor(app.app)

    const file = app.app.tmpPath('console.sqlite3')
    assert.equal(exitCode, 0, JSON.stringify(report.problems))
    assert.equal(report.storage.driver, 'embedded')
    assert.equal(report.storage.connection, 'console')
    assert.equal(report.storage.client, 'better-sqlite3')
    assert.equal(report.storage.file, file)
    assert.isTrue(report.storage.owned)
    assert.isTrue(report.storage.ready)
    const onDisk = await stat(file)
    assert.isAtLeast(report.storage.bytes, onDisk.size)
    assert.isAbove(report.storage.bytes, 0)
    assert.sameMembers(report.storage.tables, [...CONSOLE_TABLES, 'console_entries_search'])

    const ace = await app.app.container.make('ace')
    const text = await ace.create(ConsoleDoctor, [])
    await text.exec()
    const printed = text.ui.logger
      .getLogs()
      .map((log) => log.message)
      .join('\n')
    assert.include(
      printed,
      `Storage: embedded, connection console (better-sqlite3), file ${file} (`
    )
    assert.include(printed, 'created and migrated by the console')
    assert.include(printed, 'tables: console_entries, console_rollups, console_entries_search')
  }).timeout(60_000)

  test("console:doctor warns that an embedded file in production is each instance's own", async ({
    assert,
  }) => {
    const app = await embeddedApp({
      config: { authorizer: () => true, authorizeAction: () => true },
      environment: 'console',
      production: true,
    })
    const { exitCode, report } = await doctor(app.app)

    assert.equal(exitCode, 0, JSON.stringify(report.problems))
    assert.isTrue(report.environment.production)
    assert.isTrue(
      report.warnings.some((warning: string) =>
        warning.startsWith(
          `storage is stores.embedded() in production: this instance's entries stay in ${app.app.tmpPath('console.sqlite3')}`
        )
      ),
      JSON.stringify(report.warnings)
    )
  }).timeout(60_000)

  test('a console connection of config/database.ts is used as is: the app migrates it', async ({
    assert,
  }) => {
    const app = await embeddedApp({
      config: { authorizeAction: () => true },
      environment: 'console',
      providers: [async () => ({ default: AppConsoleConnectionProvider })],
    })
    const { exitCode, report } = await doctor(app.app)

    assert.equal(exitCode, 1)
    assert.isFalse(report.storage.owned)
    assert.equal(report.storage.connection, 'console')
    assert.isFalse(report.storage.ready)
    assert.include(report.storage.problem, 'node ace migration:run')
    assert.deepEqual(report.storage.tables, [])
    await assert.rejects(() => stat(app.app.tmpPath('console.sqlite3')))
  }).timeout(60_000)

  test('without better-sqlite3 the app refuses to boot with one line naming the install command', async ({
    assert,
  }) => {
    await dropStubTables(await createDatabase(), 'console')
    // as an app that never installed it: the package does not resolve
    const hooks = registerHooks({
      resolve(specifier, context, next) {
        if (specifier !== 'better-sqlite3') return next(specifier, context)
        const error = new Error(`Cannot find package '${specifier}'`) as Error & { code: string }
        error.code = 'ERR_MODULE_NOT_FOUND'
        throw error
      },
    })
    try {
      await assert.rejects(
        () => embeddedApp({ cleanDatabase: false }),
        'stores.embedded() in config/console.ts needs "better-sqlite3", which is not installed. Run: npm install better-sqlite3'
      )
    } finally {
      hooks.deregister()
    }
  }).timeout(60_000)

  test('two processes booting on a new file both come up, and each stub runs once', async ({
    assert,
    fs,
  }) => {
    await mkdir(fs.basePath, { recursive: true })
    const processes = [migrator(fs.basePath), migrator(fs.basePath)]
    await Promise.all(processes.map((process) => process.ready))
    for (const process of processes) process.go()
    const results = await Promise.all(processes.map((process) => process.done))

    for (const result of results) assert.equal(result.code, 0, result.stderr)
    // the loser of the race ran nothing: the winner's stubs were recorded when it retried
    assert.sameOrderedMembers(
      results.flatMap((result) => result.ran).sort(),
      [...MIGRATION_STUBS.console].sort()
    )
    const stored = readFile(join(fs.basePath, 'console.sqlite3'))
    assert.sameMembers(stored.migrations, [...MIGRATION_STUBS.console])
  }).timeout(60_000)

  test('stores.embedded({ path }) takes a relative path from the app root', async ({ assert }) => {
    const app = await embeddedApp({
      config: { storage: stores.embedded({ path: 'storage/console.db' }) },
    })
    const manager = await app.app.container.make('atrium.console')
    await fetch(`${app.url}/orders/3`)
    await manager.recorder.flush()
    assert.lengthOf(readFile(app.app.makePath('storage/console.db')).requests, 1)
  }).timeout(60_000)

  test('an empty path is a config error naming stores.embedded', ({ assert }) => {
    assert.throws(
      () => defineConfig({ storage: stores.embedded({ path: '' }) }),
      /stores\.embedded\(\{ path \}\) takes a file path/
    )
  })
})
