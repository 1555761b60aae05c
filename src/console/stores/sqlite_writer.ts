import { createRequire } from 'node:module'
import { extname } from 'node:path'
import { Worker } from 'node:worker_threads'
import debug from '../debug.ts'
import { rowsOfFlat } from './flat_rows.ts'
import type { RouteMinute } from '../rollups/route_minute.ts'

interface Pending {
  resolve(changes: number): void
  reject(error: Error): void
}

interface Reply {
  seq: number
  /** Rows a delete removed */
  changes?: number
  error?: string
  code?: string
}

/** The inserts of a flush (see bulk_insert.ts) */
export interface WriterStatements {
  /** `INSERT INTO … VALUES `, completed with a group of placeholders per row */
  values: string
  /** An insert whose one parameter is a chunk of rows as a JSON array */
  unpack: string
}

/**
 * Deletes of a prune, each a bounded subquery over an index (`(type, id)`,
 * the primary key, the rollups' `minute`), as statements of the writer thread
 */
const DELETE_BELOW = `DELETE FROM console_entries WHERE id IN (SELECT id FROM console_entries
  WHERE type = ? AND id < ? ORDER BY id LIMIT ?)`
const DELETE_IDS = 'DELETE FROM console_entries WHERE id IN (SELECT value FROM json_each(?))'
const DELETE_ROLLUPS = `DELETE FROM console_rollups WHERE id IN (SELECT id FROM console_rollups
  WHERE minute < ? ORDER BY minute LIMIT ?)`

/**
 * Runs the console's SQLite flushes and prune deletes on a worker thread (see
 * sqlite_writer_worker.ts). The worker keeps the process alive only while a
 * message is in flight; if it dies, pending ones fail and the next starts a
 * new worker.
 */
export class SqliteWriter {
  #filename: string
  #driver: string
  #relaxedSync: boolean
  #worker?: Worker
  #pending = new Map<number, Pending>()
  #seq = 0

  /** `relaxedSync`: `synchronous = NORMAL` on the thread's connection, for a file the console owns */
  constructor(filename: string, driver: string, relaxedSync = false) {
    this.#filename = filename
    this.#driver = driver
    this.#relaxedSync = relaxedSync
  }

  /**
   * A writer for a better-sqlite3 connection backed by a file, or undefined
   * (an in-memory database is private to its connection; other drivers are
   * asynchronous already).
   */
  static forConnection(clientName: string, connection: unknown, relaxedSync = false) {
    if (clientName !== 'better-sqlite3') return undefined
    const filename = (connection as { filename?: unknown } | undefined)?.filename
    if (typeof filename !== 'string' || !filename || filename === ':memory:') return undefined
    if (filename.startsWith('file:')) return undefined
    let driver: string
    try {
      driver = createRequire(import.meta.url).resolve('better-sqlite3')
    } catch {
      return undefined
    }
    return new SqliteWriter(filename, driver, relaxedSync)
  }

  #start() {
    const file = new URL(`./sqlite_writer_worker${extname(import.meta.url)}`, import.meta.url)
    const worker = new Worker(file, {
      workerData: {
        driver: this.#driver,
        filename: this.#filename,
        relaxedSync: this.#relaxedSync,
      },
    })
    worker.unref()
    const fail = (error: Error) => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      debug('sqlite writer stopped: %s', error.message)
      for (const pending of this.#pending.values()) pending.reject(error)
      this.#pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`console writer thread exited with code ${code}`)))
    worker.on('message', (reply: Reply) => {
      const pending = this.#pending.get(reply.seq)
      if (!pending) return
      this.#pending.delete(reply.seq)
      if (this.#pending.size === 0) worker.unref()
      if (reply.error) pending.reject(Object.assign(new Error(reply.error), { code: reply.code }))
      else pending.resolve(reply.changes ?? 0)
    })
    this.#worker = worker
    return worker
  }

  #send(message: Record<string, unknown>) {
    const worker = this.#worker ?? this.#start()
    const seq = ++this.#seq
    return new Promise<number>((resolve, reject) => {
      try {
        // a value the structured clone refuses (a function) throws here, before anything is sent
        worker.postMessage({ ...message, seq })
      } catch (error) {
        return reject(error)
      }
      this.#pending.set(seq, { resolve, reject })
      // in flight: the process must not exit before the reply
      worker.ref()
    })
  }

  /**
   * Writes the chunks (flat, see flat_rows.ts) and adds the rollups, in one
   * transaction: each chunk's rows as one multi-row insert (`sql.values` and a
   * group of placeholders per row, the last value of a row its content as
   * JSON). The rows go to the thread as they are and their content is turned
   * into JSON there: the structured clone costs the app's thread less than a
   * `JSON.stringify`.
   * Recorded content is plain data (the watchers build it, and redaction turns
   * anything else, `toJSON` included, into plain values); should a chunk hold
   * something the clone refuses (a function), it is serialised here instead,
   * as `JSON.stringify` would store it, and written by `sql.unpack`, whose one
   * parameter is a chunk as a JSON array.
   */
  async write(
    sql: WriterStatements,
    chunks: unknown[][],
    rollups: RouteMinute[] = []
  ): Promise<void> {
    try {
      await this.#send({ kind: 'flush', sql, chunks, rollups })
    } catch (error) {
      if ((error as Error)?.name !== 'DataCloneError') throw error
      debug('flush serialised on the main thread: %s', (error as Error).message)
      const serialised = chunks.map((values) => JSON.stringify(rowsOfFlat(values)))
      await this.#send({ kind: 'flush', sql, chunks: serialised, rollups })
    }
  }

  /** Deletes at most `limit` entries of `type` with ids below `belowId`; resolves with how many */
  deleteBelow(type: string, belowId: string, limit: number) {
    return this.#send({ kind: 'delete', sql: DELETE_BELOW, params: [type, belowId, limit] })
  }

  /** Deletes the entries of these ids; resolves with how many there were */
  deleteEntries(ids: string[]) {
    return this.#send({ kind: 'delete', sql: DELETE_IDS, params: [JSON.stringify(ids)] })
  }

  /** Deletes at most `limit` rollup rows of minutes before `beforeMinute` */
  deleteRollupsBefore(beforeMinute: number, limit: number) {
    return this.#send({ kind: 'delete', sql: DELETE_ROLLUPS, params: [beforeMinute, limit] })
  }

  async close() {
    const worker = this.#worker
    this.#worker = undefined
    if (worker) await worker.terminate()
  }
}
