import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Database } from '@adonisjs/lucid/database'
import type { BaseSchema } from '@adonisjs/lucid/schema'
import { TMP_ROOT } from '../helpers.ts'

const STUBS = new URL('../../stubs/make/migration/', import.meta.url)

/**
 * The pricing and rollup stubs of the agent gateway. tests/migration_stubs.ts
 * does not list them under `agent` yet; until it does, the agent tests run
 * them here, the same way (the stub body is the migration, byte for byte).
 */
export const SPEND_STUBS = ['agent_pricing', 'agent_rollups'] as const

async function loadStub(name: string): Promise<typeof BaseSchema> {
  const source = await readFile(new URL(`${name}.stub`, STUBS), 'utf8')
  const folder = join(TMP_ROOT, 'migration-stubs')
  await mkdir(folder, { recursive: true })
  const file = join(folder, `${name}.ts`)
  await writeFile(file, source.replace(/^\{\{\{[\s\S]*?\}\}\}\n/, ''))
  const module = await import(pathToFileURL(file).href)
  return module.default
}

async function run(db: Database, direction: 'up' | 'down') {
  for (const name of direction === 'up' ? SPEND_STUBS : [...SPEND_STUBS].reverse()) {
    const Migration = await loadStub(name)
    const migration = new Migration(db.connection(), `${name}.ts`, false)
    if (direction === 'up') await migration.execUp()
    else await migration.execDown()
  }
}

/** Drops the pricing and rollup tables when they exist */
export async function dropSpendTables(db: Database) {
  for (const table of [...SPEND_STUBS].reverse()) {
    await db.connection().schema.dropTableIfExists(table)
  }
}

/** Creates the pricing and rollup tables from their stubs, fresh */
export async function migrateSpendStubs(db: Database) {
  await dropSpendTables(db)
  await run(db, 'up')
}

/** Runs the stubs' own down() */
export async function rollbackSpendStubs(db: Database) {
  await run(db, 'down')
}
