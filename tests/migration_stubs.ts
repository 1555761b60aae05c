import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Database } from '@adonisjs/lucid/database'
import type { BaseSchema } from '@adonisjs/lucid/schema'
import { TMP_ROOT } from './helpers.ts'

const STUBS = new URL('../stubs/make/migration/', import.meta.url)

/**
 * The published migration stubs are the one description of Atrium's tables:
 * tests and benchmarks create their tables by running these same files, as
 * `node ace migration:run` runs them in an app after `configure`.
 */
export const MIGRATION_STUBS = {
  payments: [
    'billing_webhook_events',
    'billing_payments',
    'billing_refunds',
    'billing_disputes',
    'billing_subscriptions',
    'billing_audit_events',
  ],
  collaboration: ['collaboration'],
  console: ['console_entries', 'console_rollups', 'console_entries_search', 'console_leases'],
  agent: [
    'agent_threads',
    'agent_messages',
    'agent_runs',
    'agent_tool_calls',
    'agent_usage',
    'agent_quota',
    'agent_pricing',
    'agent_rollups',
    'agent_model_rollups',
    'agent_actor_rollups',
    'agent_run_rollups',
    'agent_error_rollups',
    'agent_duration_rollups',
    'agent_retry_rollups',
    'agent_messages_attachments',
    'agent_quota_holds',
  ],
} as const

export type MigrationFeature = keyof typeof MIGRATION_STUBS

/**
 * Loads one stub as the migration class `configure` would publish: the stub's
 * `{{{ exports(...) }}}` header (the publishing instructions) is dropped and
 * the rest is the migration file, byte for byte.
 */
async function loadStub(name: string): Promise<typeof BaseSchema> {
  const source = await readFile(new URL(`${name}.stub`, STUBS), 'utf8')
  const body = source.replace(/^\{\{\{[\s\S]*?\}\}\}\n/, '')
  const folder = join(TMP_ROOT, 'migration-stubs')
  await mkdir(folder, { recursive: true })
  const file = join(folder, `${name}.ts`)
  await writeFile(file, body)
  const module = await import(pathToFileURL(file).href)
  return module.default
}

async function run(db: Database, features: MigrationFeature[], direction: 'up' | 'down') {
  const names = features.flatMap((feature) => [...MIGRATION_STUBS[feature]])
  const ordered = direction === 'up' ? names : names.reverse()
  for (const name of ordered) {
    const Migration = await loadStub(name)
    const migration = new Migration(db.connection(), `${name}.ts`, false)
    if (direction === 'up') await migration.execUp()
    else await migration.execDown()
  }
}

/**
 * Creates a feature's tables from its published migration stubs, dropping any
 * left over from an earlier interrupted run first.
 */
export async function migrateStubs(db: Database, ...features: MigrationFeature[]) {
  await dropStubTables(db, ...features)
  await run(db, features, 'up')
}

/** Drops the tables a feature's stubs create, when they exist */
export async function dropStubTables(db: Database, ...features: MigrationFeature[]) {
  const tables = await stubTables(features)
  for (const table of tables.reverse()) {
    await db.connection().schema.dropTableIfExists(table)
  }
}

/** Runs the stubs' own `down()`, as `migration:rollback` would */
export async function rollbackStubs(db: Database, ...features: MigrationFeature[]) {
  await run(db, features, 'down')
}

/** Runs one stub alone, as running or rolling back its migration alone would */
export async function runStub(db: Database, name: string, direction: 'up' | 'down') {
  const Migration = await loadStub(name)
  const migration = new Migration(db.connection(), `${name}.ts`, false)
  if (direction === 'up') await migration.execUp()
  else await migration.execDown()
}

/** The table names the stubs create, read from their `createTable` calls */
async function stubTables(features: MigrationFeature[]) {
  const tables: string[] = []
  for (const name of features.flatMap((feature) => [...MIGRATION_STUBS[feature]])) {
    const source = await readFile(new URL(`${name}.stub`, STUBS), 'utf8')
    const declared = source.match(/tableName = '([^']+)'/)
    // A stub that alters a table an earlier stub created (adds a column) owns nothing of its
    // own: listed again, that table would be dropped before the tables that reference it
    if (declared && !tables.includes(declared[1])) tables.push(declared[1])
    for (const match of source.matchAll(/createTable\('([^']+)'/g)) tables.push(match[1])
  }
  return tables
}
