import { createRequire } from 'node:module'
import { extname } from 'node:path'
import { Worker } from 'node:worker_threads'
import debug from '../debug.ts'
import type { RouteMinute } from '../rollups/route_minute.ts'

interface Pending {
  resolve(): void
  reject(error: Error): void
}

/**
 * Runs the console's SQLite flushes on a worker thread (see
 * sqlite_writer_worker.ts). The worker keeps the process alive only while a
 * flush is in flight; if it dies, pending flushes fail and the next write
 * starts a new one.
 */
export class SqliteWriter {
  #filename: string
  #driver: string
  #worker?: Worker
  #pending = new Map<number, Pending>()
  #seq = 0

  constructor(filename: string, driver: string) {
    this.#filename = filename
    this.#driver = driver
  }

  /**
   * A writer for a better-sqlite3 connection backed by a file, or undefined
   * (an in-memory database is private to its connection; other drivers are
   * asynchronous already).
   */
  static forConnection(clientName: string, connection: unknown) {
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
    return new SqliteWriter(filename, driver)
  }

  #start() {
    const file = new URL(`./sqlite_writer_worker${extname(import.meta.url)}`, import.meta.url)
    const worker = new Worker(file, {
      workerData: { driver: this.#driver, filename: this.#filename },
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
    worker.on('message', (reply: { seq: number; error?: string }) => {
      const pending = this.#pending.get(reply.seq)
      if (!pending) return
      this.#pending.delete(reply.seq)
      if (this.#pending.size === 0) worker.unref()
      if (reply.error) pending.reject(new Error(reply.error))
      else pending.resolve()
    })
    this.#worker = worker
    return worker
  }

  /** Writes the chunks (each one JSON parameter of `sql`) and adds the rollups, in one transaction */
  write(sql: string, chunks: string[], rollups: RouteMinute[] = []): Promise<void> {
    const worker = this.#worker ?? this.#start()
    const seq = ++this.#seq
    return new Promise<void>((resolve, reject) => {
      this.#pending.set(seq, { resolve, reject })
      // in flight: the process must not exit before the reply
      worker.ref()
      worker.postMessage({ seq, sql, chunks, rollups })
    })
  }

  async close() {
    const worker = this.#worker
    this.#worker = undefined
    if (worker) await worker.terminate()
  }
}
