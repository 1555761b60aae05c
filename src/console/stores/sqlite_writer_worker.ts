/**
 * The console's SQLite writer thread: its own better-sqlite3 connection to
 * the console's database file, so a flush or a prune's delete (synchronous in
 * better-sqlite3) never blocks the app's event loop. Each message is one
 * transaction: a flush writes its entry chunks and its rollups; a delete runs
 * one bounded statement and, when the file has `auto_vacuum = INCREMENTAL`,
 * gives the pages it freed back to the disk. The outcome is posted back.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import { addRollup, type RouteMinute } from '../rollups/route_minute.ts'
import { ROW_WIDTH, rowsOfFlat } from './flat_rows.ts'
import type { WriterStatements } from './sqlite_writer.ts'

interface FlushMessage {
  kind: 'flush'
  seq: number
  sql: WriterStatements
  /** Flat rows (flat_rows.ts), or rows already serialised as one JSON array (for `sql.unpack`) */
  chunks: (unknown[] | string)[]
  rollups: RouteMinute[]
}

interface DeleteMessage {
  kind: 'delete'
  seq: number
  sql: string
  params: unknown[]
}

const { driver, filename, relaxedSync } = workerData as {
  driver: string
  filename: string
  relaxedSync: boolean
}
const Database = createRequire(import.meta.url)(driver)
const db = new Database(filename)
// readers (the app, the console API) keep reading while this thread writes
db.pragma('journal_mode = WAL')
db.pragma('busy_timeout = 5000')
// the console's own file: in WAL, a power loss may drop the last flushes but never corrupts it
if (relaxedSync) db.pragma('synchronous = NORMAL')

const statements = new Map<string, any>()
function prepared(sql: string) {
  let statement = statements.get(sql)
  if (!statement) {
    statement = db.prepare(sql)
    statements.set(sql, statement)
  }
  return statement
}

/** Rows of the one multi-row insert whose statement is kept, the size of a full chunk */
const KEPT_ROWS = 500

/**
 * Set when SQLite refuses to prepare a multi-row insert (a build whose
 * variable limit is under a chunk's 5,500 values): chunks are unpacked from
 * JSON from then on
 */
let valuesRefused = false

/**
 * One multi-row insert of a flat chunk's rows (the columns as bulk_insert.ts
 * orders them): SQLite has no boolean, so the flag becomes 0 or 1, and the
 * content is stored as its JSON text, both changed in place. One statement
 * per chunk, not one per row: each statement flushes the search index's
 * pending terms as a new segment. A full chunk's statement is kept; a shorter
 * one (a flush's last chunk) is prepared for the flush, so the statements
 * kept stay few. False when the statement cannot be prepared; nothing was
 * written or changed then.
 */
function insertRows(head: string, values: unknown[]) {
  if (valuesRefused) return false
  const rows = values.length / ROW_WIDTH
  if (rows === 0) return true
  const sql = head + new Array(rows).fill('(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')
  let statement
  try {
    statement = rows === KEPT_ROWS ? prepared(sql) : db.prepare(sql)
  } catch {
    valuesRefused = true
    return false
  }
  for (let at = 0; at < values.length; at += ROW_WIDTH) {
    values[at + 4] ??= null
    values[at + 5] ??= null
    values[at + 6] ??= null
    values[at + 7] = values[at + 7] ? 1 : 0
    values[at + 10] = JSON.stringify(values[at + 10]) ?? null
  }
  statement.run(values)
  return true
}

const CREATE_ROLLUP = `INSERT INTO console_rollups
  (minute, method, route, requests, errors, duration_sum_ms, duration_max_ms, histogram)
  VALUES (?, ?, ?, 0, 0, 0, 0, '') ON CONFLICT (minute, method, route) DO NOTHING`
const READ_ROLLUP = `SELECT id, requests, errors, duration_sum_ms, duration_max_ms, histogram
  FROM console_rollups WHERE minute = ? AND method = ? AND route = ?`
const UPDATE_ROLLUP = `UPDATE console_rollups SET requests = ?, errors = ?, duration_sum_ms = ?,
  duration_max_ms = ?, histogram = ? WHERE id = ?`

/** Read-update inside the flush's immediate transaction: no other writer can interleave */
function addRollups(rows: RouteMinute[]) {
  for (const row of rows) {
    prepared(CREATE_ROLLUP).run(row.minute, row.method, row.route)
    const stored = prepared(READ_ROLLUP).get(row.minute, row.method, row.route)
    const sum = addRollup(
      {
        ...row,
        requests: stored.requests,
        errors: stored.errors,
        durationSumMs: stored.duration_sum_ms,
        durationMaxMs: stored.duration_max_ms,
        histogram: stored.histogram,
      },
      row
    )
    prepared(UPDATE_ROLLUP).run(
      sum.requests,
      sum.errors,
      sum.durationSumMs,
      sum.durationMaxMs,
      sum.histogram,
      stored.id
    )
  }
}

/** `PRAGMA auto_vacuum` answers 2 for INCREMENTAL */
const INCREMENTAL = 2
const autoVacuum = db.prepare('PRAGMA auto_vacuum').pluck()
const freePages = db.prepare('PRAGMA freelist_count').pluck()

/**
 * One delete, and with incremental auto_vacuum as many pages given back as it
 * freed: the file shrinks by what the prune removed, never by pages the app
 * itself left free. Without it SQLite keeps freed pages for later inserts.
 */
function deleteAndReclaim(message: DeleteMessage) {
  const incremental = autoVacuum.get() === INCREMENTAL
  const freeBefore = incremental ? (freePages.get() as number) : 0
  const { changes } = prepared(message.sql).run(...message.params)
  if (incremental && changes > 0) {
    const freed = (freePages.get() as number) - freeBefore
    // exec steps the pragma to its end (one page per step); a prepared run() would free one page
    if (freed > 0) db.exec(`PRAGMA incremental_vacuum(${freed})`)
  }
  return changes
}

parentPort!.on('message', (message: FlushMessage | DeleteMessage) => {
  try {
    let changes = 0
    // immediate: the write lock is taken up front, so another process's write waits its turn
    db.transaction(() => {
      if (message.kind === 'delete') {
        changes = deleteAndReclaim(message)
        return
      }
      for (const chunk of message.chunks) {
        if (typeof chunk === 'string') prepared(message.sql.unpack).run(chunk)
        else if (!insertRows(message.sql.values, chunk)) {
          prepared(message.sql.unpack).run(JSON.stringify(rowsOfFlat(chunk)))
        }
      }
      addRollups(message.rollups)
    }).immediate()
    parentPort!.postMessage({ seq: message.seq, changes })
  } catch (error) {
    parentPort!.postMessage({
      seq: message.seq,
      error: String((error as Error)?.message ?? error),
      code: (error as { code?: string })?.code,
    })
  }
})
