import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { addRollup, rollupKey, type RouteMinute } from '../rollups/route_minute.ts'

export const ROLLUPS_TABLE = 'console_rollups'
const KEY = ['minute', 'method', 'route']
/** SQLite has no row locks: its transaction holds the database's write lock */
const SQLITE_DIALECTS = new Set(['sqlite3', 'better-sqlite3', 'libsql'])
/** Keys per statement: three bindings each stay far below every driver's limit */
const KEYS_PER_STATEMENT = 200

/** A `console_rollups` row as the app reads it (PostgreSQL gives bigints as strings) */
export function routeMinuteOf(row: any): RouteMinute {
  return {
    minute: Number(row.minute),
    method: row.method,
    route: row.route,
    requests: Number(row.requests),
    errors: Number(row.errors),
    durationSumMs: Number(row.duration_sum_ms),
    durationMaxMs: Number(row.duration_max_ms),
    histogram: row.histogram ?? '',
  }
}

function columnsOf(row: RouteMinute) {
  return {
    requests: row.requests,
    errors: row.errors,
    duration_sum_ms: row.durationSumMs,
    duration_max_ms: row.durationMaxMs,
    histogram: row.histogram,
  }
}

/**
 * Adds a flush's rollups inside its transaction, by read-lock-update: the
 * histogram is merged in the app, so each row is first created empty or
 * locked as it stands (an upsert whose update changes nothing still takes
 * the row lock on every dialect), then read and rewritten. Rows are taken in
 * key order (`rows` come sorted), so concurrent flushes queue on a shared
 * row instead of deadlocking, and each adds to what the other committed.
 */
export async function addRollups(trx: QueryClientContract, rows: RouteMinute[]) {
  const lockingRead = !SQLITE_DIALECTS.has(trx.dialect.name)
  for (let index = 0; index < rows.length; index += KEYS_PER_STATEMENT) {
    const chunk = rows.slice(index, index + KEYS_PER_STATEMENT)
    await trx
      .insertQuery()
      .table(ROLLUPS_TABLE)
      .multiInsert(
        chunk.map((row) => ({
          minute: row.minute,
          method: row.method,
          route: row.route,
          requests: 0,
          errors: 0,
          duration_sum_ms: 0,
          duration_max_ms: 0,
          histogram: '',
        }))
      )
      .onConflict(KEY)
      .merge({ requests: trx.raw('??', [`${ROLLUPS_TABLE}.requests`]) })
    const select = trx
      .from(ROLLUPS_TABLE)
      .select('id', ...KEY, 'requests', 'errors', 'duration_sum_ms', 'duration_max_ms', 'histogram')
      .whereIn(
        KEY,
        chunk.map((row) => [row.minute, row.method, row.route])
      )
    if (lockingRead) select.forUpdate()
    const stored = new Map<string, any>()
    for (const row of await select) stored.set(rollupKey(routeMinuteOf(row)), row)
    for (const row of chunk) {
      const current = stored.get(rollupKey(row))
      if (!current) throw new Error(`console rollup row ${rollupKey(row)} vanished during a flush`)
      await trx
        .from(ROLLUPS_TABLE)
        .where('id', current.id)
        .update(columnsOf(addRollup(routeMinuteOf(current), row)))
    }
  }
}

/** Rows of the minutes from `fromMinute` (included) to `toMinute` (excluded) */
export async function readRollups(
  client: QueryClientContract,
  fromMinute: number,
  toMinute: number
) {
  const rows = await client
    .from(ROLLUPS_TABLE)
    .select(...KEY, 'requests', 'errors', 'duration_sum_ms', 'duration_max_ms', 'histogram')
    .where('minute', '>=', fromMinute)
    .where('minute', '<', toMinute)
    .orderBy('minute', 'asc')
  return rows.map(routeMinuteOf)
}

/** Deletes at most `limit` rows of minutes before `beforeMinute`; returns how many */
export async function deleteRollupsBefore(
  client: QueryClientContract,
  beforeMinute: number,
  limit: number
) {
  const ids = await client
    .from(ROLLUPS_TABLE)
    .select('id')
    .where('minute', '<', beforeMinute)
    .orderBy('minute', 'asc')
    .limit(limit)
  if (ids.length === 0) return 0
  return Number(
    await client
      .from(ROLLUPS_TABLE)
      .whereIn(
        'id',
        ids.map((row: { id: string | number }) => row.id)
      )
      .delete()
  )
}
