import { performance } from 'node:perf_hooks'
import type { Database } from '@adonisjs/lucid/database'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

/** What knex passes to its `query`, `query-response` and `query-error` listeners */
interface KnexQuery {
  sql?: string
  bindings?: unknown[]
  __knexQueryUid?: string
  __knexTxId?: string
}

interface KnexEvents {
  on(event: string, listener: (...args: any[]) => void): unknown
  off(event: string, listener: (...args: any[]) => void): unknown
}

/** A query between its start and its answer */
interface Started {
  at: number
  batch: RecordingBatch | undefined
}

/** Queries started and not answered yet, per watcher; past this, the oldest is forgotten */
const MAX_IN_FLIGHT = 10_000

/**
 * Records Lucid queries from the `query` / `query-response` / `query-error`
 * events of each connection's knex instance: plain synchronous listeners,
 * cheaper than Lucid's `db:query` event (which needs `debug: true` and goes
 * through the app's asynchronous emitter) and without changing the app's
 * connection config. Connections opened after boot are attached when Lucid
 * opens them. The console's own queries run in the ignored batch and are never
 * recorded.
 */
export class QueryWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #slowMs: number
  #connections?: string[]
  #inFlight = new Map<string, Started>()
  #attached: { client: KnexEvents; connection: string; listeners: [string, any][] }[] = []
  #db?: Database
  #connect?: (name: string) => void

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { slowMs?: number; connections?: string[] }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#slowMs = options.slowMs ?? 100
    this.#connections = options.connections
  }

  /** Listens on every open watched connection, and on those Lucid opens later */
  install(db: Database) {
    this.#db = db
    for (const name of db.manager.connections.keys()) this.#attach(name)
    const manager = db.manager as any
    const connect = manager.connect
    this.#connect = connect
    const watcher = this
    manager.connect = function (this: unknown, name: string) {
      const result = connect.call(this, name)
      watcher.#attach(name)
      return result
    }
  }

  uninstall() {
    for (const { client, listeners } of this.#attached) {
      for (const [event, listener] of listeners) client.off(event, listener)
    }
    this.#attached = []
    this.#seen.clear()
    if (this.#db && this.#connect) (this.#db.manager as any).connect = this.#connect
    this.#inFlight.clear()
  }

  /** Lucid calls `manager.connect` for every query: a connection seen already returns at once */
  #seen = new Map<string, unknown>()

  #attach(name: string) {
    const connection = this.#db?.manager.get(name)?.connection
    if (!connection || this.#seen.get(name) === connection) return
    this.#seen.set(name, connection)
    if (this.#connections && !this.#connections.includes(name)) return
    for (const client of new Set([connection.client, connection.readClient])) {
      if (!client || this.#attached.some((attached) => attached.client === client)) continue
      const listeners: [string, any][] = [
        ['query', (query: KnexQuery) => this.#started(query)],
        ['query-response', (_: unknown, query: KnexQuery) => this.#finished(name, query)],
        ['query-error', (error: Error, query: KnexQuery) => this.#finished(name, query, error)],
      ]
      for (const [event, listener] of listeners) (client as KnexEvents).on(event, listener)
      this.#attached.push({ client: client as KnexEvents, connection: name, listeners })
    }
  }

  #started(query: KnexQuery) {
    const batch = batchStorage.getStore()
    if (batch?.ignored || !this.#config.enabled || !query?.__knexQueryUid) return
    if (this.#inFlight.size >= MAX_IN_FLIGHT) {
      this.#inFlight.delete(this.#inFlight.keys().next().value!)
    }
    this.#inFlight.set(query.__knexQueryUid, { at: performance.now(), batch })
  }

  #finished(connection: string, query: KnexQuery, error?: Error) {
    const uid = query?.__knexQueryUid
    const started = uid ? this.#inFlight.get(uid) : undefined
    if (!started) return
    this.#inFlight.delete(uid!)
    this.#record(
      query.sql ?? '',
      query.bindings,
      connection,
      performance.now() - started.at,
      !!query.__knexTxId,
      error,
      started.batch
    )
  }

  /**
   * Bindings as recorded: the usual short scalars are kept as they are (knex
   * does not reuse the array), anything else goes through the bounds.
   */
  #bindings(bindings: unknown[] | undefined) {
    if (!bindings) return []
    const bounds = this.#config.redact
    if (bindings.length > bounds.maxArrayLength) return redactValue(bindings, bounds)
    for (const value of bindings) {
      const kind = typeof value
      if (kind === 'number' || kind === 'boolean' || value === null) continue
      if (kind === 'string' && (value as string).length <= bounds.maxStringLength) continue
      return redactValue(bindings, bounds)
    }
    return bindings
  }

  /** Records one query; never throws */
  record(
    query: {
      sql: string
      bindings?: unknown[]
      connection: string
      timeMs: number
      inTransaction: boolean
      error?: Error
    },
    batch?: RecordingBatch
  ) {
    this.#record(
      query.sql,
      query.bindings,
      query.connection,
      query.timeMs,
      query.inTransaction,
      query.error,
      batch
    )
  }

  // positional: the knex listeners call it for every query, without an object to describe it
  #record(
    sqlText: string,
    bindings: unknown[] | undefined,
    connection: string,
    timeMs: number,
    inTransaction: boolean,
    error: Error | undefined,
    batch: RecordingBatch | undefined
  ) {
    try {
      const slow = timeMs >= this.#slowMs
      const sql = String(sqlText)
      const tags = slow ? ['slow'] : []
      if (error) tags.push('error')
      this.#recorder.record(
        {
          type: 'query',
          summary: sql.slice(0, 255),
          status: null,
          method: null,
          durationMs: timeMs,
          slow,
          tags,
          content: {
            sql: sql.length > 20_000 ? `${sql.slice(0, 20_000)}…` : sql,
            bindings: this.#bindings(bindings),
            connection,
            inTransaction,
            timeMs,
            error: error ? String(error.message) : null,
          },
        },
        batch
      )
    } catch {
      // recording never fails a query
    }
  }
}
