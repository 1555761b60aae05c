import type { Logger } from '@adonisjs/core/logger'
import { batchStorage, IGNORED_BATCH, RecordingBatch } from './batch.ts'
import debug from './debug.ts'
import { publishConsoleEvent } from './events.ts'
import { entryId, sequentialId } from './ids.ts'
import type { ConsoleStore } from './stores/contract.ts'
import type { ConsoleEntry, ResolvedConsoleConfig } from './types.ts'

/** An entry as a watcher hands it over; the recorder assigns id, batch and time */
export type NewEntry = Omit<ConsoleEntry, 'id' | 'batchId' | 'createdAt'> & { id?: string }

/**
 * Collects entries from the watchers without slowing the request: entries
 * wait in their batch until the request ends, then in a bounded memory
 * buffer, and an unref'd timer (or a buffer past `flushAt`) writes them in
 * one transaction per flush.
 * When the buffer is full, new batches are dropped whole and counted.
 */
export class ConsoleRecorder {
  #config: ResolvedConsoleConfig
  #store: ConsoleStore
  #logger?: Logger
  #buffer: ConsoleEntry[] = []
  #timer?: NodeJS.Timeout
  #flushing?: Promise<void>
  #earlyFlush?: NodeJS.Immediate
  #warnedWrite = false

  /** Entries dropped because the buffer was full */
  dropped = 0
  /** Entries lost because a flush failed */
  failed = 0
  /** Entries written */
  written = 0
  /** Recording is a no-op while the app is overloaded (see overload.ts) */
  paused = false
  /** Exceptions seen while paused: not recorded, only counted */
  exceptionsWhilePaused = 0
  /** Told of each flush's entries once they are written (the live tail); must not throw */
  onWritten?: (entries: ConsoleEntry[]) => void

  constructor(config: ResolvedConsoleConfig, store: ConsoleStore, logger?: Logger) {
    this.#config = config
    this.#store = store
    this.#logger = logger
  }

  /** Entries waiting for the next flush */
  get pending() {
    return this.#buffer.length
  }

  /** Starts the flush timer; it never keeps the process alive */
  start() {
    if (this.#timer) return
    this.#timer = setInterval(() => void this.flush(), this.#config.buffer.flushIntervalMs)
    this.#timer.unref()
  }

  /** A new batch (or the ignored one): run work in it with `batchStorage.run` */
  openBatch(ignored = false) {
    return ignored ? IGNORED_BATCH : new RecordingBatch(entryId(), false)
  }

  /** The batch of the current async context, if any */
  currentBatch() {
    return batchStorage.getStore()
  }

  /**
   * Records one entry: into its batch when inside one, else straight to the
   * buffer (sampled by its type); `null` records it alone even inside a batch.
   * Never throws.
   */
  record(entry: NewEntry, batch: RecordingBatch | null | undefined = batchStorage.getStore()) {
    if (!this.#config.enabled || batch?.ignored) return
    if (this.paused) {
      if (entry.type === 'exception') this.exceptionsWhilePaused++
      return
    }
    // named fields, one shape for every watcher's entries: a spread of their differently
    // shaped objects is a generic copy on every recorded query and log line
    const now = Date.now()
    const full: ConsoleEntry = {
      id: entry.id ?? sequentialId(now),
      batchId: batch?.id ?? '',
      type: entry.type,
      summary: entry.summary,
      status: entry.status,
      method: entry.method,
      durationMs: entry.durationMs,
      slow: entry.slow,
      tags: entry.tags,
      createdAt: now,
      content: entry.content,
    }
    if (!batch) {
      full.batchId = full.id
      const fraction = this.#config.sampling[full.type] ?? 1
      if (full.type === 'exception' || Math.random() < fraction) this.#enqueue([full])
      return
    }
    if (full.type === 'exception') batch.failing = true
    // the request's own entry always fits (it says how many others were dropped),
    // and so does a CPU profile someone asked for
    if (
      full.type !== 'request' &&
      full.type !== 'cpu_profile' &&
      batch.entries.length >= this.#config.buffer.maxEntriesPerBatch
    ) {
      batch.dropped++
      return
    }
    batch.entries.push(full)
  }

  /**
   * Records an entry in a batch of its own that nothing drops: not sampling,
   * not a full buffer, not overload protection. For the few entries worth
   * more than the bounds (a crash of the process).
   */
  recordAlone(entry: NewEntry) {
    if (!this.#config.enabled) return
    const id = entry.id ?? entryId()
    this.#buffer.push({ ...entry, id, batchId: id, createdAt: Date.now() })
  }

  /**
   * Ends a batch: a failing one (an exception, a 5xx, a slow request) is
   * always kept, any other is kept with the sampling fraction of `sampledAs`
   * (`request`, `job` for a job's execution, `schedule` for a task's run).
   * Queries repeated with the same SQL and bindings are marked duplicates.
   */
  commit(
    batch: RecordingBatch,
    options: { failing?: boolean; sampledAs?: 'request' | 'job' | 'schedule' } = {}
  ) {
    if (batch.ignored || batch.entries.length === 0 || this.paused) return
    const fraction = this.#config.sampling[options.sampledAs ?? 'request'] ?? 1
    const keep = batch.failing || options.failing || Math.random() < fraction
    if (!keep) {
      debug('batch %s sampled out (%d entries)', batch.id, batch.entries.length)
      return
    }
    markDuplicates(batch.entries)
    if (batch.trace) {
      for (const entry of batch.entries) entry.content.trace = batch.trace
    }
    this.#enqueue(batch.entries)
  }

  /** A batch that does not fit whole is dropped whole: no queries without their request */
  #enqueue(entries: ConsoleEntry[]) {
    if (this.#buffer.length + entries.length > this.#config.buffer.maxEntries) {
      this.dropped += entries.length
      debug('buffer full: dropped a batch of %d entries', entries.length)
      publishConsoleEvent('recorder.dropped', {
        entries: entries.length,
        droppedTotal: this.dropped,
      })
      return
    }
    this.#buffer.push(...entries)
    // a burst fills the buffer faster than the timer drains it: flush early
    if (this.#buffer.length >= this.#config.buffer.flushAt && !this.#earlyFlush) {
      this.#earlyFlush = setImmediate(() => {
        this.#earlyFlush = undefined
        void this.flush()
      })
    }
  }

  /**
   * Writes everything buffered in one transaction. Outside any request, in the
   * console's own (ignored) batch, so the store's queries are not recorded.
   * Concurrent calls share the running flush and then flush what arrived since.
   */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing
    if (this.#buffer.length === 0) return
    const entries = this.#buffer.splice(0, this.#buffer.length)
    this.#flushing = batchStorage
      .run(IGNORED_BATCH, () => this.#store.write(entries))
      .then(
        () => {
          this.written += entries.length
          this.onWritten?.(entries)
        },
        (error) => {
          this.failed += entries.length
          debug('flush of %d entries failed: %s', entries.length, error?.message)
          // the class and code only: a database's message may quote the rows it refused
          publishConsoleEvent('recorder.write_failed', {
            entries: entries.length,
            failedTotal: this.failed,
            error: {
              name: error instanceof Error ? error.constructor.name : 'Error',
              code: typeof error?.code === 'string' ? error.code : null,
            },
          })
          if (!this.#warnedWrite) {
            this.#warnedWrite = true
            this.#logger?.warn(
              `console could not write ${entries.length} entries (${error?.message}); they are dropped. Run the console migration if its table is missing. Further write errors are counted, not logged`
            )
          }
        }
      )
      .finally(() => {
        this.#flushing = undefined
      })
    await this.#flushing
  }

  /** Stops the timer and writes what is left */
  async stop() {
    if (this.#timer) clearInterval(this.#timer)
    if (this.#earlyFlush) clearImmediate(this.#earlyFlush)
    this.#earlyFlush = undefined
    this.#timer = undefined
    await this.flush()
  }
}

/** Past this many queries in a batch, repeats are looked for by grouping rather than pairwise */
const PAIRWISE_QUERIES = 16

/**
 * Marks queries repeated with the same SQL and bindings. Bindings are only
 * compared among queries that share their SQL, which is the rare case: a
 * batch of a few queries is checked pair by pair first, without building the
 * groups, and most have no repeated SQL.
 */
function markDuplicates(entries: ConsoleEntry[]) {
  let queries = 0
  let repeated = false
  for (let index = 0; index < entries.length && !repeated; index++) {
    if (entries[index].type !== 'query') continue
    if (++queries > PAIRWISE_QUERIES) {
      repeated = true
      break
    }
    const sql = entries[index].content.sql
    for (let before = 0; before < index; before++) {
      const other = entries[before]
      if (other.type === 'query' && other.content.sql === sql) {
        repeated = true
        break
      }
    }
  }
  if (!repeated) return
  const bySql = new Map<unknown, ConsoleEntry[]>()
  for (const entry of entries) {
    if (entry.type !== 'query') continue
    const group = bySql.get(entry.content.sql)
    if (group) group.push(entry)
    else bySql.set(entry.content.sql, [entry])
  }
  for (const group of bySql.values()) {
    if (group.length < 2) continue
    const keys = group.map((entry) => JSON.stringify(entry.content.bindings ?? []))
    const counts = new Map<string, number>()
    for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
    for (const [index, entry] of group.entries()) {
      const count = counts.get(keys[index])!
      if (count < 2) continue
      entry.content.duplicates = count
      if (!entry.tags.includes('duplicate')) entry.tags.push('duplicate')
    }
  }
}
