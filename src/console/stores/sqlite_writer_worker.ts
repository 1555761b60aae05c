/**
 * The console's SQLite writer thread: its own better-sqlite3 connection to
 * the console's database file, so a flush (synchronous in better-sqlite3)
 * never blocks the app's event loop. Each message is one flush: its entry
 * chunks and its rollups are written in one transaction and the outcome is
 * posted back.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import { addRollup, type RouteMinute } from '../rollups/route_minute.ts'

interface FlushMessage {
  seq: number
  sql: string
  chunks: string[]
  rollups: RouteMinute[]
}

const { driver, filename } = workerData as { driver: string; filename: string }
const Database = createRequire(import.meta.url)(driver)
const db = new Database(filename)
// readers (the app, the console API) keep reading while this thread writes
db.pragma('journal_mode = WAL')
db.pragma('busy_timeout = 5000')

const statements = new Map<string, any>()
function prepared(sql: string) {
  let statement = statements.get(sql)
  if (!statement) {
    statement = db.prepare(sql)
    statements.set(sql, statement)
  }
  return statement
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

parentPort!.on('message', (message: FlushMessage) => {
  try {
    const statement = prepared(message.sql)
    // immediate: the write lock is taken up front, so another process's flush waits its turn
    db.transaction(() => {
      for (const chunk of message.chunks) statement.run(chunk)
      addRollups(message.rollups)
    }).immediate()
    parentPort!.postMessage({ seq: message.seq })
  } catch (error) {
    parentPort!.postMessage({ seq: message.seq, error: String((error as Error)?.message ?? error) })
  }
})
