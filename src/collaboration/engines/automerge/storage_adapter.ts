import type { Chunk, StorageAdapterInterface, StorageKey } from '@automerge/automerge-repo'
import debug from '../../debug.ts'
import { CollabStorageError } from '../../errors.ts'
import { reportCollaborationError } from '../../observability.ts'
import type { CollaborationStorage, MergeUpdates } from '../../types.ts'

/** Longest wait between two retries of a failed write */
const MAX_RETRY_MS = 30_000

/** Key of the last state read, under which automerge-repo knows it */
const STORED = 'stored'

const noop = () => {}

interface DocumentWrites {
  name: string
  queue: Promise<void>
  /** Changes acknowledged to automerge-repo but not stored yet: a whole-state save is due */
  dirty: boolean
  dirtySince: number
  lastChangeAt: number
  failures: number
  /** Counts the changes marked dirty, so a snapshot cleans only what it holds */
  generation: number
  timer?: NodeJS.Timeout
  /** The update log loaded with the last snapshot range, for the incremental range read next */
  loadedUpdates?: Uint8Array[]
}

export interface StorageAdapterOptions {
  storage: CollaborationStorage
  debounce: number
  maxWait: number
  /** Merges what is stored into a compaction (several instances write the document) */
  merge?: MergeUpdates
  /** The whole current state of an open document (null when it is not open) */
  stateOf(documentId: string): Uint8Array | null
}

/**
 * automerge-repo's storage interface on a collaboration storage. Chunks are
 * keyed by document id; the storage keeps them under the document's name:
 *
 * - a snapshot (`[id, "snapshot", hash]`) replaces the stored state and
 *   empties the update log (`compactDocument`);
 * - an incremental chunk (`[id, "incremental", hash]`) is appended to the
 *   update log (`appendUpdate`);
 * - a storage without an update log gets the whole state (`saveDocument`)
 *   after `debounce` ms of quiet (at most `maxWait`), as on Yjs;
 * - removing a chunk does nothing: the compaction that made it obsolete has
 *   already replaced it;
 * - sync states are not kept (a reconnecting peer syncs from its heads), and
 *   the repo's storage id lives in memory.
 *
 * Writes of one document run in the order automerge-repo issued them. A
 * write never rejects into automerge-repo (which would not catch it): a
 * failure is reported, and the whole state is written again with backoff
 * until the storage takes it; `flush()` rejects while it does not.
 */
export class CollaborationStorageAdapter implements StorageAdapterInterface {
  #options: StorageAdapterOptions
  #names = new Map<string, string>()
  #writes = new Map<string, DocumentWrites>()
  #memory = new Map<string, Uint8Array>()
  /** Set by close(): a write still in flight then arms no retry */
  #closed = false

  constructor(options: StorageAdapterOptions) {
    this.#options = options
  }

  /** Tells the adapter which collaboration document an id stands for */
  register(documentId: string, docName: string) {
    this.#names.set(documentId, docName)
  }

  /** Forgets an unloaded document, once its writes are done */
  unregister(documentId: string) {
    const writes = this.#writes.get(documentId)
    if (writes?.dirty || writes?.timer) {
      return
    }
    this.#writes.delete(documentId)
    this.#names.delete(documentId)
  }

  #writesOf(documentId: string): DocumentWrites | null {
    const name = this.#names.get(documentId)
    if (!name) {
      return null
    }
    let writes = this.#writes.get(documentId)
    if (!writes) {
      writes = {
        name,
        queue: Promise.resolve(),
        dirty: false,
        dirtySince: 0,
        lastChangeAt: 0,
        failures: 0,
        generation: 0,
      }
      this.#writes.set(documentId, writes)
    }
    return writes
  }

  async load(key: StorageKey): Promise<Uint8Array | undefined> {
    return key.length === 1 ? this.#memory.get(key[0]) : undefined
  }

  async save(key: StorageKey, data: Uint8Array): Promise<void> {
    if (key.length === 1) {
      this.#memory.set(key[0], data)
      return
    }
    const [documentId, kind] = key
    const writes = this.#writesOf(documentId)
    if (!writes || (kind !== 'snapshot' && kind !== 'incremental')) {
      return
    }
    const storage = this.#options.storage
    if (!storage.appendUpdate || !storage.compactDocument) {
      // without a log, as on Yjs: the whole state after the debounce
      this.#markDirty(documentId, writes)
      return
    }
    if (kind === 'snapshot') {
      const generation = writes.generation
      await this.#enqueue(writes, 'compactDocument', async () => {
        await storage.compactDocument!(writes.name, data, this.#options.merge)
        writes.failures = 0
        if (writes.generation === generation) {
          writes.dirty = false
          clearTimeout(writes.timer)
          writes.timer = undefined
        }
      })
      return
    }
    if (writes.dirty) {
      // an append failed: the log has a gap until the whole state is stored
      this.#markDirty(documentId, writes)
      return
    }
    await this.#enqueue(writes, 'appendUpdate', () => storage.appendUpdate!(writes.name, data))
  }

  async loadRange(prefix: StorageKey): Promise<Chunk[]> {
    const [documentId, kind] = prefix
    const writes = this.#writesOf(documentId)
    if (!writes || (kind !== 'snapshot' && kind !== 'incremental')) {
      return []
    }
    if (kind === 'incremental' && writes.loadedUpdates) {
      const updates = writes.loadedUpdates
      writes.loadedUpdates = undefined
      return updates.map((data, index) => ({ key: [documentId, kind, String(index)], data }))
    }
    const stored = await this.#options.storage.loadDocument(writes.name)
    if (!stored) {
      return []
    }
    if (kind === 'incremental') {
      return (stored.updates ?? []).map((data, index) => ({
        key: [documentId, kind, String(index)],
        data,
      }))
    }
    // automerge-repo reads the snapshots, then the increments: one storage read serves both
    writes.loadedUpdates = stored.updates ?? []
    return stored.state.byteLength ? [{ key: [documentId, kind, STORED], data: stored.state }] : []
  }

  async remove(key: StorageKey): Promise<void> {
    if (key.length === 1) {
      this.#memory.delete(key[0])
    }
  }

  async removeRange(): Promise<void> {}

  /**
   * A change automerge-repo considers stored that the storage does not hold
   * yet: the whole state is written after `debounce` ms of quiet (at most
   * `maxWait` after the first such change), or at once by `flush()`.
   */
  #markDirty(documentId: string, writes: DocumentWrites) {
    const now = Date.now()
    writes.generation++
    if (!writes.dirty) {
      writes.dirty = true
      writes.dirtySince = now
    }
    writes.lastChangeAt = now
    if (writes.failures === 0 && !this.#closed) {
      writes.timer ??= setTimeout(() => this.#saveCheck(documentId, writes), this.#options.debounce)
    }
  }

  #saveCheck(documentId: string, writes: DocumentWrites) {
    writes.timer = undefined
    if (!writes.dirty) {
      return
    }
    const now = Date.now()
    const quietFor = now - writes.lastChangeAt
    const dirtyFor = now - writes.dirtySince
    const { debounce, maxWait } = this.#options
    if (writes.failures > 0 || quietFor >= debounce || dirtyFor >= maxWait) {
      this.#saveState(documentId, writes).catch(noop)
      return
    }
    const wait = Math.min(debounce - quietFor, maxWait - dirtyFor)
    writes.timer = setTimeout(() => this.#saveCheck(documentId, writes), Math.max(1, wait))
  }

  #saveState(documentId: string, writes: DocumentWrites) {
    return this.#enqueue(writes, 'saveDocument', async () => {
      if (!writes.dirty) {
        return
      }
      const state = this.#options.stateOf(documentId)
      if (!state) {
        return
      }
      writes.dirty = false
      const storage = this.#options.storage
      try {
        await (storage.compactDocument
          ? storage.compactDocument(writes.name, state, this.#options.merge)
          : storage.saveDocument(writes.name, state))
      } catch (error) {
        writes.dirty = true
        throw error
      }
      writes.failures = 0
      debug('saved automerge document "%s" (%d bytes)', writes.name, state.byteLength)
    })
  }

  /**
   * Runs one write after the document's earlier ones. A failure is reported
   * and makes the document dirty, so its whole state is written again with
   * backoff; the promise this returns never rejects.
   */
  #enqueue(writes: DocumentWrites, operation: string, task: () => Promise<void>) {
    const run = writes.queue.then(task).catch((error) => {
      reportCollaborationError({ scope: 'storage', operation, docName: writes.name, error })
      writes.failures++
      writes.generation++
      writes.dirty = true
      writes.dirtySince ||= Date.now()
      clearTimeout(writes.timer)
      const delay = Math.min(
        this.#options.debounce * 2 ** Math.max(0, writes.failures - 1),
        MAX_RETRY_MS
      )
      const documentId = [...this.#names].find(([, name]) => name === writes.name)?.[0]
      if (documentId && !this.#closed) {
        writes.timer = setTimeout(() => this.#saveCheck(documentId, writes), delay)
      }
    })
    writes.queue = run
    return run
  }

  /**
   * Writes what is pending for a document (or every one) now and waits for
   * the storage; rejects when a document could not be stored.
   */
  async flush(documentIds: string[] = [...this.#writes.keys()]) {
    const failed: string[] = []
    await Promise.all(
      documentIds.map(async (documentId) => {
        const writes = this.#writes.get(documentId)
        if (!writes) {
          return
        }
        await writes.queue
        if (writes.dirty) {
          clearTimeout(writes.timer)
          writes.timer = undefined
          await this.#saveState(documentId, writes)
        }
        if (writes.dirty) {
          failed.push(writes.name)
        }
      })
    )
    if (failed.length) {
      throw new CollabStorageError(
        `Could not store collaboration document "${failed[0]}"; it stays in memory and is retried`
      )
    }
  }

  /** Stops every retry timer (the engine is closing) */
  close() {
    this.#closed = true
    for (const writes of this.#writes.values()) {
      clearTimeout(writes.timer)
      writes.timer = undefined
    }
  }
}
