/**
 * The console's SQLite writer thread: its own better-sqlite3 connection to
 * the console's database file, so a flush (synchronous in better-sqlite3)
 * never blocks the app's event loop. Each message is one flush: its chunks
 * are written in one transaction and the outcome is posted back.
 */
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'

interface FlushMessage {
  seq: number
  sql: string
  chunks: string[]
}

const { driver, filename } = workerData as { driver: string; filename: string }
const Database = createRequire(import.meta.url)(driver)
const db = new Database(filename)
// readers (the app, the console API) keep reading while this thread writes
db.pragma('journal_mode = WAL')
db.pragma('busy_timeout = 5000')

const statements = new Map<string, any>()

parentPort!.on('message', (message: FlushMessage) => {
  try {
    let statement = statements.get(message.sql)
    if (!statement) {
      statement = db.prepare(message.sql)
      statements.set(message.sql, statement)
    }
    db.transaction(() => {
      for (const chunk of message.chunks) statement.run(chunk)
    })()
    parentPort!.postMessage({ seq: message.seq })
  } catch (error) {
    parentPort!.postMessage({ seq: message.seq, error: String((error as Error)?.message ?? error) })
  }
})
