import { randomUUID } from 'node:crypto'
import { CollabConfigError, CollabNotFoundError } from './errors.ts'
import type { CollabEngine } from './engines/engine.ts'
import type { CollabVersion, CollaborationStorage, ListPageOptions } from './types.ts'

/**
 * Named versions of the documents: snapshots kept in the configured storage,
 * taken and restored one at a time per document.
 */
export class CollabVersions {
  #locks = new Map<string, Promise<unknown>>()

  constructor(
    protected storage: CollaborationStorage,
    protected engineOf: (docName: string) => Promise<CollabEngine>
  ) {}

  async state(docName: string, versionId: string) {
    const snapshot = await this.storage.loadVersionSnapshot(docName, versionId)
    if (!snapshot) {
      throw new CollabNotFoundError(`Unknown version "${versionId}" of "${docName}"`)
    }
    return snapshot
  }

  #exclusive<T>(docName: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#locks.get(docName) ?? Promise.resolve()
    const next = previous.then(task, task)
    const settled = next.catch(() => {})
    this.#locks.set(docName, settled)
    settled.then(() => {
      if (this.#locks.get(docName) === settled) {
        this.#locks.delete(docName)
      }
    })
    return next
  }

  async #snapshot(docName: string, createdBy: string | null, label: string | null) {
    const engine = await this.engineOf(docName)
    const point = await engine.versionPoint?.(docName)
    const snapshot = point?.state ?? (await engine.getDocumentState(docName))
    const [latest] = await this.storage.listVersions(docName, { page: 1, size: 1 })
    const version: CollabVersion = {
      id: point?.id ?? randomUUID(),
      seq: (latest?.seq ?? 0) + 1,
      label,
      createdBy,
      createdAt: new Date().toISOString(),
    }
    await this.storage.saveVersion(docName, version, snapshot)
    return version
  }

  create(docName: string, createdBy: string | null, label: string | null) {
    return this.#exclusive(docName, () => this.#snapshot(docName, createdBy, label))
  }

  list(docName: string, page?: ListPageOptions) {
    return this.storage.listVersions(docName, page)
  }

  /**
   * Snapshots the current state as `restored from #<seq>`, then writes the
   * version's content into the live document as new changes.
   */
  restore(docName: string, versionId: string, restoredBy: string | null) {
    return this.#exclusive(docName, async () => {
      const snapshot = await this.state(docName, versionId)
      const all = await this.storage.listVersions(docName)
      const target = all.find(({ id }) => id === versionId)
      await this.#snapshot(docName, restoredBy, `restored from #${target?.seq ?? '?'}`)
      const engine = await this.engineOf(docName)
      await engine.replaceContent(docName, snapshot)
    })
  }

  async diff(docName: string, aId: string, bId: string) {
    const [a, b] = await Promise.all([this.state(docName, aId), this.state(docName, bId)])
    const engine = await this.engineOf(docName)
    return engine.diff(a, b)
  }

  prune(options: { keep: number; docName?: string; dryRun?: boolean }) {
    if (!Number.isInteger(options.keep) || options.keep < 0) {
      throw new CollabConfigError(
        'pruneVersions: "keep" must be a non-negative integer (versions kept per document)'
      )
    }
    return this.storage.pruneVersions(options)
  }
}
