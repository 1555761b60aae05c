import { test } from '@japa/runner'
import { execFile, spawn } from 'node:child_process'
import { mkdir, readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { promisify } from 'node:util'

const run = promisify(execFile)
const REPO_ROOT = new URL('../../', import.meta.url)

/**
 * The exact versions this repository installed, so the app's install is served
 * from npm's cache and matches what the suite ran against.
 */
async function installedVersion(name: string) {
  const manifest = new URL(`node_modules/${name}/package.json`, REPO_ROOT)
  return JSON.parse(await readFile(manifest, 'utf8')).version as string
}

async function freePort() {
  return new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/**
 * A fresh AdonisJS 7 app written by hand: the files a new app has, without the
 * demo's shortcuts, and a route that reads what the pagination provider binds.
 */
const APP_FILES: Record<string, string> = {
  'ace.js': `import '@poppinss/ts-exec'\nawait import('./bin/console.ts')\n`,
  'bin/console.ts': `import { Ignitor, prettyPrintError } from '@adonisjs/core'
const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath: string) =>
  import(filePath.startsWith('./') || filePath.startsWith('../') ? new URL(filePath, APP_ROOT).href : filePath)
new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => { app.booting(async () => { await import('#start/env') }) })
  .ace()
  .handle(process.argv.splice(2))
  .catch((error) => { process.exitCode = 1; prettyPrintError(error) })
`,
  'bin/server.ts': `import { Ignitor, prettyPrintError } from '@adonisjs/core'
const APP_ROOT = new URL('../', import.meta.url)
const IMPORTER = (filePath: string) =>
  import(filePath.startsWith('./') || filePath.startsWith('../') ? new URL(filePath, APP_ROOT).href : filePath)
new Ignitor(APP_ROOT, { importer: IMPORTER })
  .tap((app) => {
    app.booting(async () => { await import('#start/env') })
    app.listen('SIGTERM', () => app.terminate())
  })
  .httpServer()
  .start()
  .catch((error) => { process.exitCode = 1; prettyPrintError(error) })
`,
  'adonisrc.ts': `import { defineConfig } from '@adonisjs/core/app'

export default defineConfig({
  commands: [() => import('@adonisjs/core/commands')],
  providers: [
    () => import('@adonisjs/core/providers/app_provider'),
    () => import('@adonisjs/core/providers/hash_provider'),
    () => import('@adonisjs/core/providers/vinejs_provider'),
  ],
  preloads: [() => import('#start/routes'), () => import('#start/kernel')],
})
`,
  'start/env.ts': `import { Env } from '@adonisjs/core/env'

export default await Env.create(new URL('../', import.meta.url), {
  NODE_ENV: Env.schema.enum(['development', 'production', 'test'] as const),
  PORT: Env.schema.number(),
  HOST: Env.schema.string({ format: 'host' }),
  APP_KEY: Env.schema.secret(),
  LOG_LEVEL: Env.schema.string(),
})
`,
  'start/kernel.ts': `import router from '@adonisjs/core/services/router'
import server from '@adonisjs/core/services/server'

server.use([])
router.use([() => import('@adonisjs/core/bodyparser_middleware')])
`,
  'start/routes.ts': `import app from '@adonisjs/core/services/app'
import router from '@adonisjs/core/services/router'

router.get('/', () => ({ hello: 'world' }))
router.get('/pagination-config', async () => app.container.make('atrium.pagination.config'))
`,
  'config/app.ts': `import { defineConfig } from '@adonisjs/core/http'

export const appUrl = 'http://localhost'
export const http = defineConfig({})
`,
  'config/encryption.ts': `import env from '#start/env'
import { defineConfig, drivers } from '@adonisjs/core/encryption'

export default defineConfig({
  default: 'gcm',
  list: { gcm: drivers.aes256gcm({ id: 'gcm', keys: [env.get('APP_KEY').release()] }) },
})
`,
  'config/bodyparser.ts': `import { defineConfig } from '@adonisjs/core/bodyparser'

export default defineConfig({ allowedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] })
`,
  'config/hash.ts': `import { defineConfig, drivers } from '@adonisjs/core/hash'

export default defineConfig({ default: 'scrypt', list: { scrypt: drivers.scrypt({}) } })
`,
  'config/logger.ts': `import env from '#start/env'
import { defineConfig } from '@adonisjs/core/logger'

export default defineConfig({
  default: 'app',
  loggers: { app: { enabled: true, name: 'fresh-app', level: env.get('LOG_LEVEL') } },
})
`,
  '.env': `NODE_ENV=development\nHOST=127.0.0.1\nPORT=3333\nLOG_LEVEL=info\nAPP_KEY=fresh-app-key-that-is-long-enough-1234\n`,
  'tsconfig.json': `{ "extends": "@adonisjs/tsconfig/tsconfig.app.json", "compilerOptions": { "rootDir": "./", "outDir": "./build" } }\n`,
}

test.group('Packed tarball in a fresh AdonisJS 7 app', (group) => {
  group.each.timeout(300_000)

  test('installs, configures pagination and the app still boots and serves', async ({
    assert,
    fs,
  }) => {
    await mkdir(fs.basePath, { recursive: true })
    const packed = await run('npm', ['pack', '--json', '--pack-destination', fs.basePath], {
      cwd: new URL('./', REPO_ROOT),
      maxBuffer: 32 * 1024 * 1024,
    })
    const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('[')))
    const shipped: string[] = files.map(({ path }: { path: string }) => path)
    assert.includeMembers(shipped, [
      'build/index.js',
      'build/commands/main.js',
      'build/stubs/config/pagination.stub',
      'build/providers/pagination_provider.js',
      'build/src/pagination/main.js',
    ])
    assert.isFalse(
      shipped.some((path) => /^(tests|build\/tests|src)\//.test(path)),
      'ships only the build'
    )
    // the console dashboard's hashed assets, built with the package
    assert.include(shipped, 'build/console-ui/manifest.json')
    assert.isTrue(shipped.some((path) => /^build\/console-ui\/console-\w+\.js$/.test(path)))
    // the license, and every docs/ page the README links to
    assert.includeMembers(shipped, ['LICENSE', 'README.md', 'package.json'])
    const readme = await readFile(new URL('README.md', REPO_ROOT), 'utf8')
    const linked = [...readme.matchAll(/\]\((docs\/[\w-]+\.md)[)#]/g)].map(([, path]) => path)
    assert.isAbove(linked.length, 0)
    assert.includeMembers(shipped, linked)

    const dependencies: Record<string, string> = { 'adonis-atrium': `file:./${filename}` }
    for (const name of [
      '@adonisjs/core',
      '@vinejs/vine',
      '@adonisjs/assembler',
      '@adonisjs/tsconfig',
      '@poppinss/ts-exec',
    ]) {
      dependencies[name] = await installedVersion(name)
    }
    await fs.createJson('app/package.json', {
      name: 'fresh-app',
      private: true,
      type: 'module',
      imports: { '#start/*': './start/*.js', '#config/*': './config/*.js' },
      dependencies,
    })
    await run('mv', [`${fs.basePath}/${filename}`, `${fs.basePath}/app/${filename}`])
    for (const [path, contents] of Object.entries(APP_FILES)) {
      await fs.create(`app/${path}`, contents)
    }
    const appDir = `${fs.basePath}/app`
    await run(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'],
      {
        cwd: appDir,
        maxBuffer: 32 * 1024 * 1024,
      }
    )

    // the installed package's compiled console finds its assets where it is installed
    const assets = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { consoleUiAssets } = await import(${JSON.stringify(`${appDir}/node_modules/adonis-atrium/build/src/console/http/ui_assets.js`)})
const { manifest, files } = await consoleUiAssets()
console.log(JSON.stringify({ manifest, sizes: [...files.values()].map((file) => file.body.length) }))`,
      ],
      { cwd: appDir }
    )
    const loaded = JSON.parse(assets.stdout)
    assert.match(loaded.manifest.script, /^console-\w+\.js$/)
    assert.isTrue(loaded.sizes.every((size: number) => size > 0))

    const configured = await run(
      process.execPath,
      ['ace', 'configure', 'adonis-atrium', '--features=pagination'],
      {
        cwd: appDir,
      }
    )
    assert.include(configured.stdout, 'config/pagination.ts')
    await assert.fileContains('app/adonisrc.ts', [
      `() => import('adonis-atrium/commands')`,
      `() => import('adonis-atrium/providers/pagination_provider')`,
    ])
    await assert.fileContains(
      'app/start/env.ts',
      'PAGINATION_CURSOR_SECRET: Env.schema.string.optional()'
    )

    const listed = await run(process.execPath, ['ace', 'list'], { cwd: appDir })
    assert.include(listed.stdout, 'configure')

    const port = await freePort()
    const server = spawn(process.execPath, ['--import=@poppinss/ts-exec', 'bin/server.ts'], {
      cwd: appDir,
      env: { ...process.env, PORT: String(port), NODE_ENV: 'development' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    server.stdout.on('data', (chunk) => (output += chunk))
    server.stderr.on('data', (chunk) => (output += chunk))
    try {
      await new Promise<void>((resolve, reject) => {
        server.stdout.on('data', () => output.includes('started HTTP server') && resolve())
        server.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)))
      })
      const home = await fetch(`http://127.0.0.1:${port}/`)
      assert.deepEqual(await home.json(), { hello: 'world' })
      const config = await fetch(`http://127.0.0.1:${port}/pagination-config`)
      assert.equal(config.status, 200)
      assert.containSubset(await config.json(), { defaultPageSize: 25, maxPageSize: 100 })
    } finally {
      server.kill('SIGTERM')
    }
  })
})
