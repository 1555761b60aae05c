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
  // two instances creating a document's row at once may deadlock (MariaDB's
  // gap locks) or collide on the primary key: the loser runs again, when the
  // row exists and its lock orders them
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

/**
 * The row is created first if missing (never visible empty: the same
 * transaction fills it), so there is always a row to lock: a compaction
 * then reads, merges and overwrites exactly the state it locked. Deleting
 * and re-inserting instead would delete a row another instance committed
 * after this one's read, and lose its state.
 */
async function compactOnce(
  client: QueryClientContract,
  tables: TableNames,
  docName: string,
  state: Uint8Array,
  merge?: MergeUpdates
) {
  await client.transaction(async (trx) => {
    const now = new Date().toISOString()
    await trx
      .knexQuery()
      .table(tables.documents)
      .insert({ name: docName, state: Buffer.alloc(0), updated_at: now })
      .onConflict('name')
      .ignore()
    const stored = merge
      ? await trx.from(tables.documents).where('name', docName).forUpdate().select('state').first()
      : null
    const lastUpdate = await trx
      .from(tables.updates)
      .where('document_name', docName)
      .max('id as id')
      .first()
    const lastId: number | null = lastUpdate?.id ?? null
    const compacted = merge
      ? await mergeStored(trx, tables, docName, stored?.state, state, lastId, merge)
      : state
    await trx
      .from(tables.documents)
      .where('name', docName)
      .update({ state: Buffer.from(compacted), updated_at: now })
    if (lastId !== null) {
      await trx
        .from(tables.updates)
        .where('document_name', docName)
        .where('id', '<=', lastId)
        .delete()
    }
  })
}

/**
 * `state` merged with the stored state (read under the row lock) and the
 * log up to `lastId`, so two instances compacting at once cannot drop each
 * other's.
 */
async function mergeStored(
  trx: QueryClientContract,
  tables: TableNames,
  docName: string,
  storedState: unknown,
  state: Uint8Array,
  lastId: number | null,
  merge: MergeUpdates
) {
  const updates =
    lastId === null
      ? []
      : await trx
          .from(tables.updates)
          .where('document_name', docName)
          .where('id', '<=', lastId)
          .orderBy('id', 'asc')
          .select('update')
  const parts = [
    ...(storedState ? [bytes(storedState)] : []),
    ...updates.map((row: any) => bytes(row.update)),
    state,
  ].filter((part) => part.byteLength)
  return parts.length > 1 ? merge(parts) : state
}
