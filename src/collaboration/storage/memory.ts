import type {
  CollabComment,
  CollabVersion,
  CollaborationStorage,
  MergeUpdates,
  ListPageOptions,
  StoredDocument,
} from '../types.ts'
import { assertDocumentName } from '../document_name.ts'
import { slicePage } from './paging.ts'

/**
 * Keeps everything in process memory: the default, which loses every
 * document on restart. Good for tests and demos.
 */
export class InMemoryCollaborationStorage implements CollaborationStorage {
  #documents = new Map<string, { state: Uint8Array; updates: Uint8Array[] }>()
  #versions = new Map<string, { version: CollabVersion; snapshot: Uint8Array }[]>()
  #comments = new Map<string, Map<string, CollabComment>>()

  async loadDocument(docName: string): Promise<StoredDocument | null> {
    const stored = this.#documents.get(docName)
    return stored ? { state: stored.state, updates: [...stored.updates] } : null
  }

  async saveDocument(docName: string, state: Uint8Array) {
    assertDocumentName(docName)
    this.#documents.set(docName, { state: Uint8Array.from(state), updates: [] })
  }

  async appendUpdate(docName: string, update: Uint8Array) {
    assertDocumentName(docName)
    const stored = this.#documents.get(docName)
    if (stored) {
      stored.updates.push(Uint8Array.from(update))
    } else {
      this.#documents.set(docName, { state: new Uint8Array(0), updates: [Uint8Array.from(update)] })
    }
  }

  async compactDocument(docName: string, state: Uint8Array, merge?: MergeUpdates) {
    const stored = this.#documents.get(docName)
    const parts = stored ? [stored.state, ...stored.updates, state].filter((p) => p.byteLength) : []
    await this.saveDocument(docName, merge && parts.length > 1 ? merge(parts) : state)
  }

  async listVersions(docName: string, page?: ListPageOptions) {
    const rows = (this.#versions.get(docName) ?? []).map(({ version }) => ({ ...version }))
    return slicePage(
      rows.sort((a, b) => b.seq - a.seq),
      page
    )
  }

  async saveVersion(docName: string, version: CollabVersion, snapshot: Uint8Array) {
    assertDocumentName(docName)
    const list = this.#versions.get(docName) ?? []
    list.push({ version: { ...version }, snapshot: Uint8Array.from(snapshot) })
    this.#versions.set(docName, list)
  }

  async loadVersionSnapshot(docName: string, versionId: string) {
    return (
      this.#versions.get(docName)?.find(({ version }) => version.id === versionId)?.snapshot ?? null
    )
  }

  async pruneVersions({
    keep,
    docName,
    dryRun,
  }: {
    keep: number
    docName?: string
    dryRun?: boolean
  }) {
    let deleted = 0
    for (const [name, list] of this.#versions) {
      if (docName !== undefined && name !== docName) {
        continue
      }
      const sorted = [...list].sort((a, b) => b.version.seq - a.version.seq)
      const removed = sorted.slice(Math.max(0, keep))
      deleted += removed.length
      if (!dryRun && removed.length) {
        this.#versions.set(name, sorted.slice(0, Math.max(0, keep)))
      }
    }
    return deleted
  }

  async listComments(docName: string, space?: string, page?: ListPageOptions) {
    const rows = [...(this.#comments.get(docName)?.values() ?? [])]
      .filter((comment) => space === undefined || comment.space === space)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .map((comment) => structuredClone(comment))
    return slicePage(rows, page)
  }

  async getComment(docName: string, commentId: string) {
    const comment = this.#comments.get(docName)?.get(commentId)
    return comment ? structuredClone(comment) : null
  }

  async saveComment(docName: string, comment: CollabComment) {
    assertDocumentName(docName)
    const map = this.#comments.get(docName) ?? new Map()
    map.set(comment.id, structuredClone(comment))
    this.#comments.set(docName, map)
  }

  async deleteComment(docName: string, commentId: string) {
    this.#comments.get(docName)?.delete(commentId)
  }
}
