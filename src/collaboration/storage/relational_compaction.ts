import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type { MergeUpdates } from '../types.ts'
import type { collaborationTableNames } from './relational.ts'

type TableNames = ReturnType<typeof collaborationTableNames>

const MAX_COMPACT_ATTEMPTS = 3

/** A binary column as bytes, whatever the driver returned (Buffer, or text on some dialects) */
export function bytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  }
  return new Uint8Array(Buffer.from(value as string))
}

/** A compaction that lost a race with another instance's: a deadlock or the row inserted first */
function isCompactionConflict(error: any) {
  return (
    error?.errno === 1213 ||
    error?.errno === 1062 ||
    ['40P01', '40001', '23505'].includes(error?.code) ||
    /UNIQUE constraint failed/.test(error?.message ?? '')
  )
}

/**
 * Replaces the stored state of a document and empties its update log, in
 * one transaction. With `merge` (several app instances), the stored state
 * and log are merged into the new state first.
 */
export async function compactStoredDocument(
  client: QueryClientContract,
  tables: TableNames,
  docName: string,
  state: Uint8Array,
  merge?: MergeUpdates
) {
  // two instances compacting a never-compacted document at once find no row
  // to lock: one then deadlocks (MariaDB's gap locks) or hits the primary key
  // (PostgreSQL) and runs again, when the row exists and its lock orders them
  for (let attempt = 1; ; attempt++) {
    try {
      return await compactOnce(client, tables, docName, state, merge)
    } catch (error) {
      if (attempt >= MAX_COMPACT_ATTEMPTS || !isCompactionConflict(error)) {
        throw error
      }
    }
  }
}

async function compactOnce(
  client: QueryClientContract,
  tables: TableNames,
  docName: string,
  state: Uint8Array,
  merge?: MergeUpdates
) {
  await client.transaction(async (trx) => {
    const lastUpdate = await trx
      .from(tables.updates)
      .where('document_name', docName)
      .max('id as id')
      .first()
    const compacted = merge
      ? await mergeStored(trx, tables, docName, state, lastUpdate?.id, merge)
      : state
    await trx.from(tables.documents).where('name', docName).delete()
    await trx.table(tables.documents).insert({
      name: docName,
      state: Buffer.from(compacted),
      updated_at: new Date().toISOString(),
    })
    if (lastUpdate?.id !== null && lastUpdate?.id !== undefined) {
      await trx
        .from(tables.updates)
        .where('document_name', docName)
        .where('id', '<=', lastUpdate.id)
        .delete()
    }
  })
}

/**
 * `state` with the stored state and the log up to `lastId`, read under a
 * row lock so two instances compacting at once cannot drop each other's.
 */
async function mergeStored(
  trx: QueryClientContract,
  tables: TableNames,
  docName: string,
  state: Uint8Array,
  lastId: number | null | undefined,
  merge: MergeUpdates
) {
  const document = await trx
    .from(tables.documents)
    .where('name', docName)
    .forUpdate()
    .select('state')
    .first()
  const updates =
    lastId === null || lastId === undefined
      ? []
      : await trx
          .from(tables.updates)
          .where('document_name', docName)
          .where('id', '<=', lastId)
          .orderBy('id', 'asc')
          .select('update')
  const parts = [
    ...(document ? [bytes(document.state)] : []),
    ...updates.map((row: any) => bytes(row.update)),
    state,
  ].filter((part) => part.byteLength)
  return parts.length > 1 ? merge(parts) : state
}
