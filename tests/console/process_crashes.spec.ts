import { spawn } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { test } from '@japa/runner'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Database } from '@adonisjs/lucid/database'
import { consoleApp } from './helpers.ts'
import { connectionConfig } from '../helpers.ts'
import { migrateStubs } from '../migration_stubs.ts'
import { defineConfig, stores } from '../../src/console/main.ts'
import type { MemoryConsoleStore } from '../../src/console/stores/memory.ts'

const FIXTURE = fileURLToPath(new URL('./fixtures/crashing_app.ts', import.meta.url))

/** A SQLite file with the console's tables, in the test's folder, whatever DB says */
async function sqliteFile(directory: string, cleanup: (fn: () => Promise<void>) => void) {
  await mkdir(directory, { recursive: true })
  const db = new Database(
    { connection: 'sqlite', connections: { sqlite: connectionConfig('sqlite', directory) } },
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(new URL(`file://${directory}/`)))
  )
  cleanup(() => db.manager.closeAll())
  await migrateStubs(db, 'console')
  return db
}

/** Runs the crashing app until it exits: its exit code and what it printed */
function runCrashingApp(directory: string, mode: string) {
  const child = spawn(process.execPath, ['--import=@poppinss/ts-exec', FIXTURE, directory, mode], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'test' },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  )
}

async function storedCrashes(db: Database) {
  const rows = await db.from('console_entries').where('type', 'exception').select('*')
  return rows.map((row) => ({ ...row, content: JSON.parse(row.content) }))
}

test.group('Console process crashes (an app in a child process)', () => {
  test('an uncaught exception is stored, then Node prints it and exits with code 1', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const db = await sqliteFile(fs.basePath, cleanup)
    const { code, stderr } = await runCrashingApp(fs.basePath, 'uncaught')

    assert.equal(code, 1)
    assert.include(stderr, 'Error: payment worker exploded')
    const crashes = await storedCrashes(db)
    assert.lengthOf(crashes, 1)
    assert.equal(crashes[0].summary, 'Error: payment worker exploded')
    assert.equal(crashes[0].tags, ',crash,uncaught,')
    assert.equal(crashes[0].batch_id, crashes[0].id)
    assert.equal(crashes[0].content.origin, 'uncaughtException')
    assert.include(crashes[0].content.stack, 'crashing_app.ts')
  }).timeout(60_000)

  test('an unhandled rejection still ends the process, and is stored first', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const db = await sqliteFile(fs.basePath, cleanup)
    const { code, stderr } = await runCrashingApp(fs.basePath, 'rejection')

    assert.equal(code, 1)
    assert.include(stderr, 'ledger write rejected')
    const crashes = await storedCrashes(db)
    assert.lengthOf(crashes, 1)
    assert.equal(crashes[0].summary, 'Error: ledger write rejected')
    assert.equal(crashes[0].tags, ',crash,unhandled-rejection,')
  }).timeout(60_000)

  test('an exception the app handles itself is recorded and the process lives on', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const db = await sqliteFile(fs.basePath, cleanup)
    const { code, stdout } = await runCrashingApp(fs.basePath, 'handled-uncaught')

    assert.equal(code, 0)
    assert.include(stdout, 'HANDLED retry queue hiccup\nALIVE')
    const crashes = await storedCrashes(db)
    assert.lengthOf(crashes, 1)
    assert.equal(crashes[0].summary, 'Error: retry queue hiccup')
  }).timeout(60_000)

  test('a rejection the app handles is recorded with its reason redacted', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const db = await sqliteFile(fs.basePath, cleanup)
    const { code, stdout } = await runCrashingApp(fs.basePath, 'handled-rejection')

    assert.equal(code, 0)
    assert.include(stdout, 'HANDLED rejection\nALIVE')
    const crashes = await storedCrashes(db)
    assert.lengthOf(crashes, 1)
    assert.equal(crashes[0].tags, ',crash,unhandled-rejection,')
    assert.deepEqual(crashes[0].content.reason, { token: '[redacted]', orderId: 7 })
    assert.notInclude(JSON.stringify(crashes[0]), 'sk_live_not_for_logs')
  }).timeout(60_000)
})

test.group('Console process crashes (in this process)', () => {
  test('two consoles add one listener, and only the newest records a crash', async ({ assert }) => {
    const ours = () =>
      process.listeners('uncaughtException').filter((fn) => fn.name === 'onUncaughtException')
        .length
    const crashConfig = { storage: stores.memory(), exceptions: { processCrashes: true } }
    const first = await consoleApp({ config: crashConfig })
    const second = await consoleApp({ config: crashConfig })
    assert.equal(ours(), 1)

    // the app's own listener (in place of the test runner's) makes the crash a handled one
    const runners = process
      .listeners('uncaughtException')
      .filter((fn) => fn.name !== 'onUncaughtException')
    for (const listener of runners) process.off('uncaughtException', listener)
    const handled: unknown[] = []
    const appListener = (error: unknown) => handled.push(error)
    process.on('uncaughtException', appListener)
    try {
      ;(process.emit as (event: string, ...args: unknown[]) => boolean)(
        'uncaughtException',
        new Error('disk quota exceeded'),
        'uncaughtException'
      )
    } finally {
      process.off('uncaughtException', appListener)
      for (const listener of runners) process.on('uncaughtException', listener)
    }
    assert.lengthOf(handled, 1)
    await first.manager.recorder.flush()
    await second.manager.recorder.flush()
    const newest = await (second.manager.store as MemoryConsoleStore).list({
      type: 'exception',
      limit: 10,
    })
    const older = await (first.manager.store as MemoryConsoleStore).list({
      type: 'exception',
      limit: 10,
    })
    assert.deepEqual(
      newest.data.map((entry) => entry.summary),
      ['Error: disk quota exceeded']
    )
    assert.lengthOf(older.data, 0)

    await second.close()
    assert.equal(ours(), 1)
    await first.close()
    assert.equal(ours(), 0)
  })

  test('an unhandledRejection listener is added only while the app has one', async ({ assert }) => {
    const runners = process.listeners('unhandledRejection')
    const app = await consoleApp({
      config: { storage: stores.memory(), exceptions: { processCrashes: true } },
    })
    process.removeAllListeners('unhandledRejection')
    try {
      // none of the app's: a listener of the console alone would stop rejections from crashing
      assert.equal(process.listenerCount('unhandledRejection'), 0)
      const appListener = () => {}
      process.on('unhandledRejection', appListener)
      assert.equal(process.listenerCount('unhandledRejection'), 2)
      process.off('unhandledRejection', appListener)
      assert.equal(process.listenerCount('unhandledRejection'), 0)
    } finally {
      for (const listener of runners) process.on('unhandledRejection', listener)
    }
    await app.close()
    assert.deepEqual(process.listeners('unhandledRejection'), runners)
  })

  test('defineConfig refuses a bad processCrashes', ({ assert }) => {
    assert.throws(
      () => defineConfig({ exceptions: { processCrashes: 'yes' as any } }),
      /Invalid "exceptions.processCrashes" in config\/console.ts: use true, false or \{ flushTimeoutMs \}/
    )
    assert.throws(
      () => defineConfig({ exceptions: { processCrashes: { flushTimeoutMs: 60_000 } } }),
      /Invalid "exceptions.processCrashes.flushTimeoutMs" in config\/console.ts: use 1 to 10000/
    )
  })
})
