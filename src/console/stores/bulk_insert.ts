import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { prepareTags } from '../models/console_entry.ts'
import type { ConsoleEntry } from '../types.ts'
import { withoutNulEscapes } from '../../shared/nul.ts'
import { ROW_WIDTH } from './flat_rows.ts'

/** Rows per insert statement inside a flush's transaction */
export const INSERT_CHUNK = 500

const TABLE = 'console_entries'
const COLUMNS =
  'id, batch_id, type, summary, status, method, duration_ms, slow, tags, created_at, content'

/**
 * One statement per chunk whose only parameter is the chunk as a JSON array
 * of row arrays: the database unpacks it (SQLite `json_each`, PostgreSQL
 * `json_array_elements`, MariaDB/MySQL `JSON_TABLE`). Compiling a multi-row
 * insert with eleven bindings per row cost more than the rest of recording
 * together; one `JSON.stringify` of the chunk is the whole serialisation, and
 * `content` is stored as the JSON text of its array element.
 */
const UNPACK: Record<string, string> = {
  sqlite: `INSERT INTO ${TABLE} (${COLUMNS})
    SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5,
      value ->> 6, value ->> 7, value ->> 8, value ->> 9, value -> 10
    FROM json_each(?)`,
  postgres: `INSERT INTO ${TABLE} (${COLUMNS})
    SELECT r ->> 0, r ->> 1, r ->> 2, r ->> 3, (r ->> 4)::integer, r ->> 5,
      (r ->> 6)::double precision, (r ->> 7)::boolean, r ->> 8, (r ->> 9)::bigint, (r -> 10)::text
    FROM json_array_elements(?::json) AS r`,
  mysql: `INSERT INTO ${TABLE} (${COLUMNS})
    SELECT * FROM JSON_TABLE(?, '$[*]' COLUMNS (
      id VARCHAR(24) PATH '$[0]', batch_id VARCHAR(24) PATH '$[1]', type VARCHAR(16) PATH '$[2]',
      summary VARCHAR(255) PATH '$[3]', status INT PATH '$[4]', method VARCHAR(10) PATH '$[5]',
      duration_ms DOUBLE PATH '$[6]', slow TINYINT PATH '$[7]', tags VARCHAR(255) PATH '$[8]',
      created_at BIGINT PATH '$[9]', content JSON PATH '$[10]'
    )) AS r`,
}

const DIALECTS: Record<string, keyof typeof UNPACK> = {
  'better-sqlite3': 'sqlite',
  'sqlite3': 'sqlite',
  'libsql': 'sqlite',
  'postgres': 'postgres',
  'mysql': 'mysql',
}

/** Writes `entry`'s row into `values` from `at`, one value per column of `COLUMNS` */
function putRow(values: unknown[], at: number, entry: ConsoleEntry) {
  values[at] = entry.id
  values[at + 1] = entry.batchId
  values[at + 2] = entry.type
  values[at + 3] = entry.summary.slice(0, 255)
  values[at + 4] = entry.status
  // Node accepts UNSUBSCRIBE (11 characters): PostgreSQL would refuse the whole flush
  values[at + 5] = entry.method?.slice(0, 10) ?? null
  values[at + 6] = entry.durationMs
  values[at + 7] = entry.slow
  values[at + 8] = prepareTags(entry.tags).slice(0, 255)
  values[at + 9] = entry.createdAt
  values[at + 10] = entry.content
}

function rowOf(entry: ConsoleEntry) {
  const row = new Array(ROW_WIDTH).fill(null)
  putRow(row, 0, entry)
  return row
}

/** The SQLite statement, for the writer thread */
export const SQLITE_INSERT = UNPACK.sqlite

/**
 * The head of the writer thread's multi-row insert, which appends one
 * `(?, …)` group per row: bound values cost SQLite less than unpacking the
 * JSON array, where each of the eleven `->>` reads the row's element again
 * (benchmarks/console/sqlite_writer.ts)
 */
export const SQLITE_INSERT_VALUES = `INSERT INTO ${TABLE} (${COLUMNS}) VALUES `

/**
 * Entries as the SQLite writer thread's chunks (see flat_rows.ts),
 * `INSERT_CHUNK` rows per chunk. Each is sized up front and filled, so it is
 * allocated once and stays packed: an array grown by `push` is copied at
 * every growth, and the structured clone copies a holey one (`new Array(n)`
 * with holes) key by key.
 */
export function flatChunks(entries: ConsoleEntry[]) {
  const chunks: unknown[][] = []
  for (let index = 0; index < entries.length; index += INSERT_CHUNK) {
    const end = Math.min(entries.length, index + INSERT_CHUNK)
    const values = new Array((end - index) * ROW_WIDTH).fill(null)
    for (let at = index; at < end; at++) putRow(values, (at - index) * ROW_WIDTH, entries[at])
    chunks.push(values)
  }
  return chunks
}

/** The unpacking statement for a client's dialect, or undefined to fall back to `multiInsert` */
export function unpackingInsert(client: QueryClientContract) {
  const dialect = DIALECTS[client.dialect.name]
  return dialect ? UNPACK[dialect] : undefined
}

/** Writes `entries` through `client` (a transaction), `INSERT_CHUNK` rows per statement */
export async function insertEntries(
  client: QueryClientContract,
  entries: ConsoleEntry[],
  sql = unpackingInsert(client)
) {
  const postgres = DIALECTS[client.dialect.name] === 'postgres'
  for (let index = 0; index < entries.length; index += INSERT_CHUNK) {
    const chunk = entries.slice(index, index + INSERT_CHUNK)
    if (sql) {
      const json = JSON.stringify(chunk.map(rowOf))
      // one recorded NUL (a `?q=%00`) would fail the statement and drop the whole flush
      await client.rawQuery(sql, [postgres ? withoutNulEscapes(json) : json])
      continue
    }
    await client
      .insertQuery()
      .table(TABLE)
      .multiInsert(
        chunk.map((entry) => {
          const row = rowOf(entry)
          return {
            id: row[0],
            batch_id: row[1],
            type: row[2],
            summary: row[3],
            status: row[4],
            method: row[5],
            duration_ms: row[6],
            slow: row[7],
            tags: row[8],
            created_at: row[9],
            content: JSON.stringify(row[10]),
          }
        })
      )
  }
}
