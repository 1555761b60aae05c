import * as Y from 'yjs'
import debug from '../../debug.ts'
import { CollabStorageError } from '../../errors.ts'
import { reportCollaborationError } from '../../observability.ts'
import type { CollabEngineHost } from '../engine.ts'

/** Updates merged per `Y.mergeUpdates` call: its cost grows faster than linearly with the count */
const MERGE_CHUNK = 64
/** Longest wait between two retries of a failed compaction */
const MAX_RETRY_MS = 30_000

/**
 * Merges updates in bounded chunks, then merges the merged chunks: 20,000
 * updates cost tens of milliseconds instead of seconds in one call.
 */
export function mergeBounded(updates: Uint8Array[]): Uint8Array {
  let level = updates
  while (level.length > 1) {
    const next: Uint8Array[] = []
    for (let index = 0; index < level.length; index += MERGE_CHUNK) {
      const chunk = level.slice(index, index + MERGE_CHUNK)
      next.push(chunk.length === 1 ? chunk[0] : Y.mergeUpdates(chunk))
    }
    level = next
  }
  return level[0]
}

function runCompactCheck(storage: RoomStorage) {
  storage.compactCheck()
}

function runRetry(storage: RoomStorage) {
  storage.retry()
}

const noop = () => {}

/**
 * The writes of one open document: the update log (when the storage has
 * one), the debounced compaction, and retries with backoff after a failure.
 * A write that fails is reported and never counted as stored.
 */
export class RoomStorage {
  #log: Uint8Array[] = []
  /** An append failed: the log has a gap, so only a compaction may store until one succeeds */
  #logBroken = false
  #dirty = false
  #dirtySince = 0
  #lastChangeAt = 0
  #failures = 0
  #appendTimer?: NodeJS.Timeout
  #compactTimer?: NodeJS.Timeout
  #queue: Promise<void> = Promise.resolve()

  constructor(
    readonly name: string,
    readonly doc: Y.Doc,
    readonly host: CollabEngineHost,
    /** Called after each successful compaction with the size of the stored state */
    readonly onSaved: (stateBytes: number) => void
  ) {}

  get dirty() {
    return this.#dirty
  }

  markDirty(update: Uint8Array, log = true) {
    if (!this.#dirty) {
      this.#dirty = true
      this.#dirtySince = Date.now()
    }
    const storage = this.host.storage
    if (log && storage.appendUpdate && storage.compactDocument && !this.#logBroken) {
      this.#log.push(update)
      this.#appendTimer ??= setTimeout(() => {
        this.#appendTimer = undefined
        this.#enqueue('appendUpdate', () => this.#appendLog()).catch(noop)
      }, this.host.appendInterval)
    }
    // debounce without re-arming a timer per update: the timer checks the
    // time of the last change when it fires, and never waits past maxWait.
    // After a failure the pending retry is the timer; a change made while
    // the retry writes arms the check, so it is stored after a success and
    // cleared (the backoff goes on) after a failure
    this.#lastChangeAt = Date.now()
    this.#compactTimer ??= setTimeout(runCompactCheck, this.host.debounce, this)
  }

  /**
   * Compacts when the document has been quiet for `debounce` or dirty for
   * `maxWait`; otherwise waits for the rest of the quiet time.
   */
  compactCheck() {
    // a no-op when its own timer called it; a direct call leaves no timer behind
    clearTimeout(this.#compactTimer)
    this.#compactTimer = undefined
    if (!this.#dirty) {
      return
    }
    const now = Date.now()
    const quietFor = now - this.#lastChangeAt
    const dirtyFor = now - this.#dirtySince
    if (quietFor >= this.host.debounce || dirtyFor >= this.host.maxWait) {
      this.#enqueue('saveDocument', () => this.#compact()).catch(noop)
      return
    }
    const wait = Math.min(this.host.debounce - quietFor, this.host.maxWait - dirtyFor)
    this.#compactTimer = setTimeout(runCompactCheck, Math.max(1, wait), this)
  }

  /** A retry after a failed compaction: runs at once, quiet or not */
  retry() {
    clearTimeout(this.#compactTimer)
    this.#compactTimer = undefined
    this.#enqueue('saveDocument', () => this.#compact()).catch(noop)
  }

  async #appendLog() {
    if (this.#log.length === 0 || this.#logBroken) {
      return
    }
    const updates = this.#log
    this.#log = []
    try {
      await this.host.storage.appendUpdate!(this.name, mergeBounded(updates))
    } catch (error) {
      // the batch is not retried on its own (a batch the storage refuses, say
      // over the packet size, would fail forever): the document stays dirty
      // and the compaction, which writes the whole state, stores it
      this.#logBroken = true
      this.#log = []
      clearTimeout(this.#compactTimer)
      this.#compactTimer = setTimeout(runRetry, this.#retryDelay(), this)
      throw error
    }
  }

  #retryDelay() {
    return Math.min(this.host.debounce * 2 ** Math.max(0, this.#failures - 1), MAX_RETRY_MS)
  }

  async #compact() {
    if (!this.#dirty) {
      return
    }
    clearTimeout(this.#appendTimer)
    this.#appendTimer = undefined
    const dirtySince = this.#dirtySince
    this.#log = []
    this.#dirty = false
    const state = Y.encodeStateAsUpdate(this.doc)
    const storage = this.host.storage
    try {
      if (storage.compactDocument) {
        // another instance's appended updates are merged in, never dropped
        await storage.compactDocument(
          this.name,
          state,
          this.host.cluster ? mergeBounded : undefined
        )
      } else {
        await storage.saveDocument(this.name, state)
      }
    } catch (error) {
      this.#failures++
      // unsaved since before this write, whatever changed while it ran
      this.#dirty = true
      this.#dirtySince = dirtySince
      // retried with backoff from debounce up to 30 s, even if nobody edits again
      clearTimeout(this.#compactTimer)
      this.#compactTimer = setTimeout(runRetry, this.#retryDelay(), this)
      debug('saving "%s" failed (%d in a row)', this.name, this.#failures)
      throw error
    }
    debug('saved "%s" (%d bytes)', this.name, state.byteLength)
    this.#failures = 0
    this.#logBroken = false
    this.onSaved(state.byteLength)
  }

  /**
   * Runs storage work in order. The returned promise rejects with a
   * `CollabStorageError` when the work failed; the failure is reported
   * (the collaboration error event) either way.
   */
  #enqueue(operation: string, task: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(task).catch((error) => {
      reportCollaborationError({ scope: 'storage', operation, docName: this.name, error })
      throw new CollabStorageError(
        `Could not store collaboration document "${this.name}" (${operation}); it stays in memory and is retried`,
        { cause: error }
      )
    })
    this.#queue = run.catch(noop)
    return run
  }

  /**
   * Writes every pending change now and waits for storage; rejects when
   * storage refused it (a retry is already scheduled then).
   */
  flush(): Promise<void> {
    if (this.#failures === 0) {
      clearTimeout(this.#compactTimer)
      this.#compactTimer = undefined
    }
    return this.#enqueue('saveDocument', () => this.#compact())
  }

  destroy() {
    clearTimeout(this.#appendTimer)
    clearTimeout(this.#compactTimer)
  }
}
