import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { mkdir, rm } from 'node:fs/promises'
import { getActiveTest } from '@japa/runner'
import { IgnitorFactory } from '@adonisjs/core/factories'
import type { FileSystem } from '@japa/file-system'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import type { ApplicationService } from '@adonisjs/core/types'
import type { Router } from '@adonisjs/core/http'
import { Database } from '@adonisjs/lucid/database'
import type { DatabaseConfig, ConnectionConfig } from '@adonisjs/lucid/types/database'
import { Redis } from 'ioredis'

export type Dialect = 'sqlite' | 'pg' | 'mysql'

/**
 * The database the suite runs against, from `DB=sqlite|pg|mysql` (SQLite by default).
 */
export function dialect(): Dialect {
  const value = process.env.DB ?? 'sqlite'
  if (value !== 'sqlite' && value !== 'pg' && value !== 'mysql') {
    throw new Error(`Unknown DB="${value}". Use DB=sqlite, DB=pg or DB=mysql`)
  }
  return value
}

/**
 * One id per test run, inherited by the processes a run spawns: each run gets
 * its own PostgreSQL and MariaDB database and its own tmp/ folder, so two runs
 * (two checkouts, or CI beside a developer) never share a table or a file.
 * bin/test.ts sets it; a script that imports these helpers alone shares "local".
 */
export const RUN_ID = process.env.ATRIUM_TEST_RUN ?? 'local'

/** The server-side database that holds a run's database (PG_DATABASE / MYSQL_DATABASE) */
const ADMIN_DATABASE = {
  pg: process.env.PG_DATABASE ?? 'test',
  mysql: process.env.MYSQL_DATABASE ?? 'test',
}

function runDatabase(base: string) {
  return RUN_ID === 'local' ? base : `${base}_run_${RUN_ID}`
}

export const SERVICES = {
  pg: {
    host: process.env.PG_HOST ?? '127.0.0.1',
    port: Number(process.env.PG_PORT ?? 5432),
    user: process.env.PG_USER ?? 'postgres',
    password: process.env.PG_PASSWORD ?? '',
    database: runDatabase(ADMIN_DATABASE.pg),
  },
  mysql: {
    host: process.env.MYSQL_HOST ?? '127.0.0.1',
    port: Number(process.env.MYSQL_PORT ?? 3306),
    user: process.env.MYSQL_USER ?? 'root',
    password: process.env.MYSQL_PASSWORD ?? '',
    database: runDatabase(ADMIN_DATABASE.mysql),
  },
  redis: {
    host: process.env.REDIS_HOST ?? '127.0.0.1',
    port: Number(process.env.REDIS_PORT ?? 6379),
  },
}

/** This run's scratch folder: tmp/run-<id>/ */
export const TMP_ROOT = fileURLToPath(new URL(`../tmp/run-${RUN_ID}/`, import.meta.url))

/**
 * Lucid connection config for a dialect; SQLite writes to a file under `directory`.
 */
export function connectionConfig(
  which: Dialect = dialect(),
  directory: string = TMP_ROOT
): ConnectionConfig {
  switch (which) {
    case 'sqlite':
      return {
        client: 'better-sqlite3',
        connection: { filename: join(directory, 'db.sqlite3') },
        useNullAsDefault: true,
      }
    case 'pg':
      return { client: 'pg', connection: { ...SERVICES.pg } }
    case 'mysql':
      return { client: 'mysql2', connection: { ...SERVICES.mysql, dateStrings: false } }
  }
}

/**
 * The `database` config a test app boots with: one connection named after the dialect.
 */
export function databaseConfig(directory?: string): DatabaseConfig {
  const which = dialect()
  return { connection: which, connections: { [which]: connectionConfig(which, directory) } }
}

/**
 * A Lucid connection to the server-side database a run's own database lives
 * in (`test` unless PG_DATABASE / MYSQL_DATABASE say otherwise).
 */
function adminDatabase(which: 'pg' | 'mysql') {
  const connection = connectionConfig(which) as any
  connection.connection.database = ADMIN_DATABASE[which]
  return new Database(
    { connection: which, connections: { [which]: connection } },
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(new URL('../', import.meta.url)))
  )
}

/**
 * Creates this run's database on the selected server (and drops it when the
 * run ends, through the returned function). Names are ours, so they are
 * interpolated: `RUN_ID` is digits set by bin/test.ts.
 */
export async function createRunDatabase(): Promise<() => Promise<void>> {
  const which = dialect()
  await mkdir(TMP_ROOT, { recursive: true })
  const removeTmp = async () => {
    if (RUN_ID !== 'local') await rm(TMP_ROOT, { recursive: true, force: true })
  }
  if (which === 'sqlite' || RUN_ID === 'local') {
    return removeTmp
  }
  if (!/^\w+$/.test(RUN_ID)) {
    throw new Error(`ATRIUM_TEST_RUN must be letters, digits or _ (got "${RUN_ID}")`)
  }
  const name = SERVICES[which].database
  const quoted = which === 'pg' ? `"${name}"` : `\`${name}\``
  const admin = adminDatabase(which)
  try {
    await admin.rawQuery(`drop database if exists ${quoted}`)
    await admin.rawQuery(`create database ${quoted}`)
  } finally {
    await admin.manager.closeAll()
  }
  return async () => {
    const dropper = adminDatabase(which)
    try {
      // PostgreSQL refuses to drop a database with open sessions
      const force = which === 'pg' ? ' with (force)' : ''
      await dropper.rawQuery(`drop database if exists ${quoted}${force}`)
    } finally {
      await dropper.manager.closeAll()
      await removeTmp()
    }
  }
}

/**
 * Fails fast, naming the service and how to start it, when the selected
 * database or Redis does not answer.
 */
export async function assertServicesReachable() {
  const problems: string[] = []
  const which = dialect()
  if (which !== 'sqlite') {
    const db = adminDatabase(which)
    try {
      await db.rawQuery('select 1')
    } catch (error) {
      const where = `${SERVICES[which].host}:${SERVICES[which].port}/${ADMIN_DATABASE[which]}`
      const name = which === 'pg' ? 'PostgreSQL' : 'MariaDB'
      problems.push(
        `${name} is not reachable at ${where} (DB=${which}): ${(error as Error).message}`
      )
    } finally {
      await db.manager.closeAll()
    }
  }

  const redis = new Redis({ ...SERVICES.redis, lazyConnect: true, maxRetriesPerRequest: 0 })
  redis.on('error', () => {})
  try {
    await redis.connect()
    await redis.ping()
  } catch (error) {
    problems.push(
      `Redis is not reachable at ${SERVICES.redis.host}:${SERVICES.redis.port}: ${(error as Error).message}`
    )
  } finally {
    redis.disconnect()
  }

  if (problems.length) {
    throw new Error(
      `Atrium's tests need these services:\n  - ${problems.join('\n  - ')}\n` +
        'Start them as .ci/run does (see README, "Running the tests").'
    )
  }
}

function activeTest(helper: string) {
  const test = getActiveTest()
  if (!test) {
    throw new Error(`"${helper}" can only be used inside a Japa test`)
  }
  return test
}

/**
 * A Lucid `Database` on the selected dialect, closed when the test ends.
 */
export async function createDatabase() {
  const test = activeTest('createDatabase')
  const directory = test.context!.fs.basePath
  await mkdir(directory, { recursive: true })
  const app = new AppFactory().create(test.context!.fs.baseUrl)
  const db = new Database(databaseConfig(directory), new LoggerFactory().create(), new Emitter(app))
  test.cleanup(() => db.manager.closeAll())
  return db
}

/**
 * A Redis client on the local server; keys under `prefix` are deleted when the test ends.
 */
export function createRedis(prefix?: string) {
  const test = activeTest('createRedis')
  const redis = new Redis({ ...SERVICES.redis, maxRetriesPerRequest: 1 })
  test.cleanup(async () => {
    if (prefix) {
      const keys = await redis.keys(`${prefix}*`)
      if (keys.length) {
        await redis.del(...keys)
      }
    }
    redis.disconnect()
  })
  return redis
}

export interface SetupAppOptions {
  /** Provider imports added after Adonis' core providers */
  providers?: (() => Promise<any>)[]
  /** Config merged over the core config, keyed by file name (`pagination`, `payments`, ...) */
  config?: Record<string, unknown>
  /** Boots Lucid on the selected dialect with the `database` config */
  database?: boolean
  /** Routes registered before the router is committed */
  routes?: (router: Router) => void | Promise<void>
  /** Skips the HTTP server, for apps that only need the container */
  http?: boolean
  /**
   * `console` boots the app as `node ace` does: Ace's kernel bound as `ace`
   * before the providers boot, and no HTTP server
   */
  environment?: 'web' | 'console'
}

export interface TestApp {
  app: ApplicationService
  /** `http://127.0.0.1:<port>` when the HTTP server runs */
  url: string
  /** The Node.js server the Adonis server answers on */
  server?: Server
  close(): Promise<void>
}

/** How long a terminating app may wait for its HTTP connections before the test fails */
const SERVER_CLOSE_GRACE_MS = 10_000

/**
 * Closes the server as Adonis' HTTP server process does: stop listening,
 * drop idle keep-alive connections, wait for the rest. A connection still
 * open after the grace period (a client kept busy during shutdown) fails the
 * test instead of hanging the run: test cleanups have no timeout.
 */
async function closeHttpServer(server: Server) {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  let timer: NodeJS.Timeout | undefined
  const graceOver = new Promise<'stuck'>((resolve) => {
    timer = setTimeout(() => resolve('stuck'), SERVER_CLOSE_GRACE_MS)
  })
  const outcome = await Promise.race([closed, graceOver])
  clearTimeout(timer)
  if (outcome === 'stuck') {
    const open = await new Promise<number>((resolve) =>
      server.getConnections((_e, n) => resolve(n))
    )
    server.closeAllConnections()
    await closed
    throw new Error(
      `The HTTP server still had ${open} open connection(s) ${SERVER_CLOSE_GRACE_MS / 1000} s after the app began to terminate`
    )
  }
}

/**
 * Boots a real Adonis app, as `bin/server.ts` would: providers registered and
 * booted, routes committed, then (unless `http: false`) a Node.js HTTP server
 * listening on 127.0.0.1 on a free port before the `ready` hooks run. The app
 * terminates when the test ends.
 */
export async function setupApp(options: SetupAppOptions = {}): Promise<TestApp> {
  const test = activeTest('setupApp')
  const appRoot = test.context!.fs.baseUrl
  await mkdir(test.context!.fs.basePath, { recursive: true })

  const providers = [...(options.providers ?? [])]
  const config: Record<string, unknown> = { ...options.config }
  if (options.database) {
    providers.unshift(() => import('@adonisjs/lucid/database_provider'))
    config.database = databaseConfig(test.context!.fs.basePath)
  }

  const ignitor = new IgnitorFactory()
    .withCoreProviders()
    .withCoreConfig()
    .merge({ rcFileContents: { providers }, config })
    .create(appRoot, {
      importer: (filePath) => {
        if (filePath.startsWith('./') || filePath.startsWith('../')) {
          return import(new URL(filePath, appRoot).href)
        }
        return import(filePath)
      },
    })

  const environment = options.environment ?? 'web'
  const app = ignitor.createApp(environment)
  let nodeServer: Server | undefined
  let url = ''
  // an app that fails to boot still closes what it opened (database pools, servers)
  try {
    await app.init()
    if (environment === 'console') {
      const { Kernel } = await import('@adonisjs/core/ace')
      app.container.bindValue('ace', new Kernel(app))
    }
    await app.boot()
    await app.start(async () => {
      if (options.routes) {
        await options.routes(await app.container.make('router'))
      }
      if (options.http === false || environment === 'console') {
        return
      }
      const server = await app.container.make('server')
      await server.boot()
      nodeServer = createServer(server.handle.bind(server))
      server.setNodeServer(nodeServer)
      await new Promise<void>((resolve) => nodeServer!.listen(0, '127.0.0.1', resolve))
      url = `http://127.0.0.1:${(nodeServer.address() as AddressInfo).port}`
      // As Adonis' HTTP server process does: the server closes when the app terminates
      app.terminating(() => closeHttpServer(nodeServer!))
    })
  } catch (error) {
    await app.terminate().catch(() => {})
    throw error
  }

  const close = () => app.terminate()
  test.cleanup(close)
  return { app, url, server: nodeServer, close }
}

/**
 * The package entrypoint `node ace configure adonis-atrium` imports.
 */
export const PACKAGE_ENTRY = new URL('../index.ts', import.meta.url).href

/**
 * Ace in a console app written to the test's folder with the files
 * `node ace add` expects in a fresh AdonisJS app; prompts can be trapped.
 */
export async function setupConsoleApp(fs: FileSystem) {
  await fs.create('.env', '')
  await fs.create('tsconfig.json', '{}')
  await fs.create(
    'adonisrc.ts',
    `import { defineConfig } from '@adonisjs/core/app'\nexport default defineConfig({})`
  )
  await fs.create(
    'start/env.ts',
    `import { Env } from '@adonisjs/core/env'\nexport default await Env.create(new URL('../', import.meta.url), {})`
  )
  const ignitor = new IgnitorFactory()
    .withCoreProviders()
    .withCoreConfig()
    .create(fs.baseUrl, {
      importer: (filePath) =>
        import(
          filePath.startsWith('./') || filePath.startsWith('../')
            ? new URL(filePath, fs.baseUrl).href
            : filePath
        ),
    })
  const app = ignitor.createApp('console')
  await app.init()
  await app.boot()
  const ace = await app.container.make('ace')
  ace.ui.switchMode('raw')
  return ace
}
