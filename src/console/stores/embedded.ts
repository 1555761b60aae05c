import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ApplicationService } from '@adonisjs/core/types'
import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { BaseSchema } from '@adonisjs/lucid/schema'
import { stubsRoot } from '../../../stubs/main.ts'
import { assertPackagesInstalled } from '../../shared/optional_import.ts'
import debug from '../debug.ts'

/** The Lucid connection name of the embedded store */
export const EMBEDDED_CONNECTION = 'console'

/** The file under the app's tmp folder when `stores.embedded()` names none */
export const EMBEDDED_FILE = 'console.sqlite3'

/**
 * The console's migration stubs, in the order `configure` publishes them: the
 * same files create the tables in an app's database and in the embedded one.
 */
export const CONSOLE_MIGRATIONS = [
  'console_entries',
  'console_rollups',
  'console_entries_search',
  'console_leases',
] as const

/** Which stubs have run on the embedded file, one row each */
export const EMBEDDED_MIGRATIONS_TABLE = 'console_migrations'

/** Attempts of a boot migration that another process holds the write lock against */
const MIGRATE_ATTEMPTS = 5

/** Attempts to set a new connection's pragmas while another process switches the file to WAL */
const PRAGMA_ATTEMPTS = 20

/** Where the stubs are written to be imported: the app's tmp folder */
type TmpFolder = Pick<ApplicationService, 'tmpPath'>

/** What the embedded store resolved to at boot */
export interface EmbeddedStorage {
  /** The file the console created and migrates; false when config/database.ts defines `console` */
  owned: boolean
  /** The SQLite file when the console owns it */
  file?: string
}

/**
 * Lucid connection config of the embedded file: better-sqlite3 in WAL mode,
 * so the dashboard's reads never wait on a flush, with `synchronous = NORMAL`
 * (in WAL, a power loss may drop the last flushes but never corrupts the file)
 * and, on a new file, incremental auto_vacuum, so prunes give their pages back.
 */
export function embeddedConnectionConfig(filename: string) {
  return {
    client: 'better-sqlite3' as const,
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      afterCreate: (connection: any, done: (error: Error | null, connection: any) => void) => {
        let attempt = 0
        const configure = () => {
          try {
            // counts only before the first table exists: the console's own file, created here
            connection.pragma('auto_vacuum = INCREMENTAL')
            connection.pragma('journal_mode = WAL')
            connection.pragma('synchronous = NORMAL')
            done(null, connection)
          } catch (error) {
            // Two processes opening a new file at once: the one switching it to WAL holds a lock
            // the other's switch cannot wait for (SQLite answers busy at once); the switch is kept
            // in the file, so a retry finds it done
            if (isBusy(error) && ++attempt < PRAGMA_ATTEMPTS) setTimeout(configure, 20 * attempt)
            else done(error as Error, connection)
          }
        }
        configure()
      },
    },
  }
}

/**
 * Registers the `console` connection on the embedded SQLite file unless the
 * app's config/database.ts defines one, and brings the file's tables up to
 * the console's migration stubs. An app-defined `console` connection is the
 * app's: its migrations are the app's to run, as with `stores.database()`.
 */
export async function openEmbedded(
  app: ApplicationService,
  db: Database,
  path?: string
): Promise<EmbeddedStorage> {
  if (db.manager.has(EMBEDDED_CONNECTION)) {
    debug('embedded store: config/database.ts defines "%s", used as is', EMBEDDED_CONNECTION)
    return { owned: false }
  }
  assertPackagesInstalled(['better-sqlite3'], 'stores.embedded() in config/console.ts')
  const file = !path ? app.tmpPath(EMBEDDED_FILE) : isAbsolute(path) ? path : app.makePath(path)
  await mkdir(dirname(file), { recursive: true })
  db.manager.add(EMBEDDED_CONNECTION, embeddedConnectionConfig(file))
  debug('embedded store: connection "%s" on %s', EMBEDDED_CONNECTION, file)
  await migrateEmbedded(app, db.connection(EMBEDDED_CONNECTION))
  return { owned: true, file }
}

function isBusy(error: unknown) {
  return String((error as { code?: unknown })?.code ?? '').startsWith('SQLITE_BUSY')
}

/**
 * Runs the stubs the file has not run yet, and records them, in one
 * transaction. Two processes booting on a new file queue on SQLite's write
 * lock: the second waits (busy timeout) and then finds the stubs recorded; a
 * transaction that still fails busy is retried.
 */
export async function migrateEmbedded(app: TmpFolder, client: QueryClientContract) {
  await client.rawQuery(
    `CREATE TABLE IF NOT EXISTS ${EMBEDDED_MIGRATIONS_TABLE} (name varchar(100) PRIMARY KEY, migrated_at bigint NOT NULL)`
  )
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.transaction((trx) => migratePending(app, trx))
    } catch (error) {
      if (!isBusy(error) || attempt >= MIGRATE_ATTEMPTS) throw error
      debug('embedded store: migration retried after %s', (error as { code: string }).code)
    }
  }
}

async function migratePending(app: TmpFolder, trx: TransactionClientContract) {
  // a write first: SQLite makes a transaction that read before it writes fail
  // at once when another process holds the write lock; one that writes first waits for it
  await trx.from(EMBEDDED_MIGRATIONS_TABLE).where('name', '').delete()
  const rows = await trx.from(EMBEDDED_MIGRATIONS_TABLE).select('name')
  const done = new Set(rows.map((row: { name: string }) => row.name))
  const pending = CONSOLE_MIGRATIONS.filter((name) => !done.has(name))
  for (const name of pending) {
    const Migration = await loadStub(app, name)
    await new Migration(trx, `${name}.ts`, false).execUp()
    await trx.table(EMBEDDED_MIGRATIONS_TABLE).insert({ name, migrated_at: Date.now() })
    debug('embedded store: ran the %s migration', name)
  }
  return pending
}

/**
 * Loads one published stub as the migration class `node ace migration:run`
 * would run: written without its publishing header to the app's tmp folder
 * (outside node_modules, where Node or the app's loader strips its types),
 * its Lucid import pointed at the Lucid this package uses, imported, and
 * removed so `node ace build` never compiles it.
 */
async function loadStub(app: TmpFolder, name: string): Promise<typeof BaseSchema> {
  const source = await readFile(join(stubsRoot, 'make/migration', `${name}.stub`), 'utf8')
  // one folder per process: two processes booting on one app never remove each other's files
  const folder = app.tmpPath(`console-migrations-${process.pid}`)
  const file = join(folder, `${name}.ts`)
  await mkdir(folder, { recursive: true })
  const body = source
    .replace(/^\{\{\{[\s\S]*?\}\}\}\n/, '')
    // Lucid as this package resolves it: the tmp folder may sit outside the app (tests, containers)
    .replaceAll(`'@adonisjs/lucid/schema'`, `'${import.meta.resolve('@adonisjs/lucid/schema')}'`)
  await writeFile(file, body)
  try {
    const module = await import(pathToFileURL(file).href)
    return module.default
  } finally {
    await rm(folder, { recursive: true, force: true })
  }
}

/** Bytes of a SQLite file and its write-ahead log; 0 for a file not created yet */
export async function sqliteFileBytes(file: string) {
  let bytes = 0
  for (const path of [file, `${file}-wal`]) {
    bytes += await stat(path).then(
      (stats) => stats.size,
      () => 0
    )
  }
  return bytes
}
