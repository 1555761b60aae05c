import type { Emitter } from '@adonisjs/core/events'
import type { Database } from '@adonisjs/lucid/database'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

/** The `db:query` event data Lucid emits for connections with `debug: true` */
interface QueryEvent {
  sql: string
  bindings?: unknown[]
  connection: string
  duration?: [number, number]
  inTransaction?: boolean
  model?: string
  error?: Error
}

/**
 * Records Lucid queries from the emitter's `db:query` event. Lucid emits it
 * only for connections whose config has `debug: true`, so the watcher turns
 * that flag on for the connections it watches (Lucid reads it each time it
 * creates a query client). The console's own writes run in the ignored batch
 * and are never recorded.
 */
export class QueryWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #slowMs: number
  #connections?: string[]
  #emitter?: Emitter<any>
  #listener = (event: QueryEvent) => this.record(event)

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

  /** Subscribes to `db:query` and turns `debug` on for the watched connections */
  install(emitter: Emitter<any>, db: Database) {
    for (const [name, node] of db.manager.connections) {
      if (this.#connections && !this.#connections.includes(name)) continue
      node.config.debug = true
      if (node.connection) node.connection.config.debug = true
    }
    this.#emitter = emitter
    emitter.on('db:query', this.#listener)
  }

  uninstall() {
    this.#emitter?.off('db:query', this.#listener)
  }

  /** Records one query; never throws */
  record(event: QueryEvent) {
    try {
      if (this.#connections && !this.#connections.includes(event.connection)) return
      const timeMs = event.duration ? event.duration[0] * 1000 + event.duration[1] / 1e6 : 0
      const slow = timeMs >= this.#slowMs
      const sql = String(event.sql ?? '')
      const tags = slow ? ['slow'] : []
      if (event.error) tags.push('error')
      this.#recorder.record({
        type: 'query',
        summary: sql.slice(0, 255),
        status: null,
        method: null,
        durationMs: timeMs,
        slow,
        tags,
        content: {
          sql: sql.length > 20_000 ? `${sql.slice(0, 20_000)}…` : sql,
          bindings: redactValue(event.bindings ?? [], this.#config.redact),
          connection: event.connection,
          inTransaction: !!event.inTransaction,
          model: event.model ?? null,
          timeMs,
          error: event.error ? String(event.error.message) : null,
        },
      })
    } catch {
      // recording never fails a query
    }
  }
}
