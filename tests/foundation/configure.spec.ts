import { test } from '@japa/runner'
import { spawn } from 'node:child_process'
import { symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FileSystem } from '@japa/file-system'
import Configure from '@adonisjs/core/commands/configure'
import { FEATURE_INSTALLERS } from '../../configure.ts'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'

/** What `configure` lists for every feature: one line, one command */
const ALL_PACKAGES = 'npm i yjs y-protocols lib0 ws stripe ai @ai-sdk/anthropic better-sqlite3'
/** The same line as Ace's raw (test) logger writes it: `yellow(npm i) yjs ...` */
const ALL_PACKAGES_RAW =
  'yellow(npm i) yjs y-protocols lib0 ws stripe ai @ai-sdk/anthropic better-sqlite3'

function count(haystack: string, needle: string) {
  return haystack.split(needle).length - 1
}

/**
 * Runs `node ace configure <this package> ...args` in a fresh app the way a
 * CI job or a script does: a real process whose stdin is /dev/null, no TTY.
 */
async function configureWithoutTerminal(fs: FileSystem, args: string[]) {
  await fs.create('ace.js', `import '@poppinss/ts-exec'\nawait import('./bin/console.ts')\n`)
  await fs.create(
    'bin/console.ts',
    `import { Ignitor, prettyPrintError } from '@adonisjs/core'
const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (path: string) =>
  import(path.startsWith('./') || path.startsWith('../') ? new URL(path, APP_ROOT).href : path)
new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => { app.booting(async () => { await import('#start/env') }) })
  .ace()
  .handle(process.argv.splice(2))
  .catch((error) => { process.exitCode = 1; prettyPrintError(error) })
`
  )
  await fs.create(
    'adonisrc.ts',
    `import { defineConfig } from '@adonisjs/core/app'\nexport default defineConfig({ commands: [() => import('@adonisjs/core/commands')] })\n`
  )
  await fs.create(
    'start/env.ts',
    `import { Env } from '@adonisjs/core/env'\nexport default await Env.create(new URL('../', import.meta.url), {})\n`
  )
  await fs.create('.env', '')
  await fs.createJson('tsconfig.json', {
    extends: '@adonisjs/tsconfig/tsconfig.app.json',
    compilerOptions: { rootDir: './', outDir: './build' },
  })
  await fs.createJson('package.json', {
    name: 'fresh-app',
    private: true,
    type: 'module',
    imports: { '#start/*': './start/*.js' },
  })
  // the app resolves @adonisjs/core and its peers from this repository
  await symlink(
    fileURLToPath(new URL('../../node_modules', import.meta.url)),
    join(fs.basePath, 'node_modules')
  )

  const child = spawn(process.execPath, ['ace', 'configure', PACKAGE_ENTRY, ...args], {
    cwd: fs.basePath,
    env: { ...process.env, FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const exitCode = await new Promise<number | null>((resolve) => child.once('close', resolve))
  return { exitCode, stdout, stderr }
}

test.group('Configure', (group) => {
  group.each.timeout(120_000)

  test('--features=pagination publishes its config, provider, commands and env validation', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination'])
    await command.exec()

    assert.equal(command.exitCode, 0)
    await assert.fileContains('config/pagination.ts', [
      `import { defineConfig } from 'adonis-atrium/pagination'`,
      `cursorSecret: env.get('PAGINATION_CURSOR_SECRET')`,
    ])
    await assert.fileContains('adonisrc.ts', [
      `() => import('adonis-atrium/commands')`,
      `() => import('adonis-atrium/providers/pagination_provider')`,
    ])
    await assert.fileContains(
      'start/env.ts',
      'PAGINATION_CURSOR_SECRET: Env.schema.string.optional()'
    )
  })

  test('without --features the features are chosen in a prompt', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    ace.prompt
      .trap('Select the Atrium features to configure')
      .assertFails([] as any, 'Select at least one feature')
      .chooseOptions([FEATURE_INSTALLERS.findIndex(({ name }) => name === 'pagination')])
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--no-install'])
    await command.exec()

    assert.equal(command.exitCode, 0)
    await assert.fileExists('config/pagination.ts')
    await assert.fileContains('adonisrc.ts', 'adonis-atrium/providers/pagination_provider')
    await assert.fileNotExists('config/payments.ts')
  })

  test('--features=all configures every feature', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--features=all', '--no-install'])
    await command.exec()

    assert.equal(command.exitCode, 0)
    for (const name of FEATURE_INSTALLERS.map((installer) => installer.name)) {
      await assert.fileExists(`config/${name}.ts`)
    }
    const output = ace.ui.logger
      .getLogs()
      .map(({ message }) => message)
      .join('\n')
    assert.equal(count(output, ALL_PACKAGES_RAW), 1, output)
  })

  test('without a terminal, --features=all configures every feature and lists the packages once', async ({
    assert,
    fs,
  }) => {
    const { exitCode, stdout, stderr } = await configureWithoutTerminal(fs, ['--features=all'])

    assert.equal(exitCode, 0, stdout + stderr)
    for (const name of FEATURE_INSTALLERS.map((installer) => installer.name)) {
      await assert.fileExists(`config/${name}.ts`)
      await assert.fileContains('adonisrc.ts', `adonis-atrium/providers/${name}_provider`)
    }
    await assert.fileContains('start/env.ts', 'PAGINATION_CURSOR_SECRET')
    assert.equal(count(stdout, ALL_PACKAGES), 1, stdout)
    assert.include(stdout, 'pass --install to install them')
  })

  test('without a terminal and without --features it exits 1 naming --features', async ({
    assert,
    fs,
  }) => {
    const { exitCode, stdout, stderr } = await configureWithoutTerminal(fs, [])

    assert.equal(exitCode, 1, stdout + stderr)
    assert.include(
      stderr,
      'pass --features=collaboration,payments,pagination,agent,console (any of them) or --features=all'
    )
    await assert.fileNotContains('adonisrc.ts', 'adonis-atrium')
  })

  test('in a terminal the packages of every chosen feature are asked about once', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    ace.prompt
      .trap('Install yjs, y-protocols, lib0, ws, stripe, ai, @ai-sdk/anthropic, better-sqlite3?')
      .reject()
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--features=all'])
    await command.exec()

    assert.equal(command.exitCode, 0)
    for (const name of FEATURE_INSTALLERS.map((installer) => installer.name)) {
      await assert.fileExists(`config/${name}.ts`)
    }
    const output = ace.ui.logger
      .getLogs()
      .map(({ message }) => message)
      .join('\n')
    assert.equal(count(output, ALL_PACKAGES_RAW), 1, output)
    // an untrapped second prompt would have thrown; the trap was consumed
    assert.equal(ace.prompt.traps.prompts.size, 0)
  })

  test('--install=false lists the packages without asking', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(Configure, [
      PACKAGE_ENTRY,
      '--features=payments',
      '--install=false',
    ])
    await command.exec()

    assert.equal(command.exitCode, 0)
    const output = ace.ui.logger
      .getLogs()
      .map(({ message }) => message)
      .join('\n')
    assert.include(output, 'yellow(npm i) stripe')
    assert.notInclude(output, 'No terminal')
  })

  test('an unknown feature is an error with exit code 1 that names it', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const command = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination,chat'])
    await command.exec()

    assert.equal(command.exitCode, 1)
    const errors = ace.ui.logger.getLogs().map(({ message }) => message)
    assert.isTrue(
      errors.some((message) => message.includes('Unknown Atrium feature "chat"')),
      errors.join('\n')
    )
    await assert.fileNotExists('config/pagination.ts')
    await assert.fileNotContains('adonisrc.ts', 'adonis-atrium')
  })

  test('running configure twice duplicates nothing', async ({ assert, fs }) => {
    const ace = await setupConsoleApp(fs)
    const first = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination'])
    await first.exec()
    const published = {
      rc: await fs.contents('adonisrc.ts'),
      env: await fs.contents('start/env.ts'),
      config: await fs.contents('config/pagination.ts'),
    }
    const again = await ace.create(Configure, [PACKAGE_ENTRY, '--features=pagination'])
    await again.exec()

    assert.equal(again.exitCode, 0)
    assert.equal(await fs.contents('adonisrc.ts'), published.rc)
    assert.equal(await fs.contents('start/env.ts'), published.env)
    assert.equal(await fs.contents('config/pagination.ts'), published.config)
  })
})
