import { randomUUID } from 'node:crypto'
import { appendFile, mkdir, readFile, rename, rm, readdir, writeFile } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import { assertDocumentName, isValidDocumentName } from '../document_name.ts'
import { CollabStorageError } from '../errors.ts'
import type {
  CollabComment,
  CollabVersion,
  CollaborationStorage,
  MergeUpdates,
  ListPageOptions,
  StoredDocument,
} from '../types.ts'
import { slicePage } from './paging.ts'

async function readOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return null
    }
    throw error
  }
}

async function writeAtomically(path: string, data: Uint8Array | string) {
  const temporary = `${path}.${randomUUID()}.tmp`
  await writeFile(temporary, data)
  await rename(temporary, path)
}

/** The document a folder holds, or nothing for a folder no document maps to */
function documentNameOf(folder: string): string[] {
  try {
    const name = decodeURIComponent(folder)
    return isValidDocumentName(name) && encodeURIComponent(name) === folder ? [name] : []
  } catch {
    return []
  }
}

/**
 * Reads length-prefixed records; a torn last record (the process died while
 * appending) is ignored.
 */
function readLog(buffer: Buffer): Uint8Array[] {
  const records: Uint8Array[] = []
  let offset = 0
  while (offset + 4 <= buffer.length) {
    const length = buffer.readUInt32BE(offset)
    if (offset + 4 + length > buffer.length) {
      break
    }
    records.push(new Uint8Array(buffer.subarray(offset + 4, offset + 4 + length)))
    offset += 4 + length
  }
  return records
}

/**
 * Keeps each document in its own folder under `baseDir` (default
 * `storage/collaboration` in the working directory): `state.bin`, an
 * append-only `updates.log`, `versions.json` with one snapshot file per
 * version, and `comments.json`. Writes replace files atomically.
 */
export class FileSystemStorage implements CollaborationStorage {
  readonly baseDir: string
  #locks = new Map<string, Promise<unknown>>()

  constructor(baseDir: string = 'storage/collaboration') {
    this.baseDir = resolve(baseDir)
  }

  /**
   * The document's folder, one level under `baseDir`: the name is checked
   * (no `.`/`..` segment) and encoded, and the resolved path must still be a
   * child of `baseDir`, so no name reaches another folder.
   */
  #folder(docName: string) {
    assertDocumentName(docName)
    const folder = join(this.baseDir, encodeURIComponent(docName))
    const inside = relative(this.baseDir, folder)
    if (!inside || inside.startsWith('..') || inside.includes(sep)) {
      throw new CollabStorageError(
        `Document name ${JSON.stringify(docName)} escapes the storage folder`
      )
    }
    return folder
  }

  /**
   * Read-modify-write of a document's JSON files runs one at a time.
   */
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

  async #readJson<T>(docName: string, file: string, fallback: T): Promise<T> {
    const content = await readOrNull(join(this.#folder(docName), file))
    return content ? JSON.parse(content.toString('utf8')) : fallback
  }

  async #writeJson(docName: string, file: string, value: unknown) {
    await mkdir(this.#folder(docName), { recursive: true })
    await writeAtomically(join(this.#folder(docName), file), JSON.stringify(value))
  }

  async loadDocument(docName: string): Promise<StoredDocument | null> {
    const folder = this.#folder(docName)
    const [state, log] = await Promise.all([
      readOrNull(join(folder, 'state.bin')),
      readOrNull(join(folder, 'updates.log')),
    ])
    if (!state && !log) {
      return null
    }
    return {
      state: state ? new Uint8Array(state) : new Uint8Array(0),
      updates: log ? readLog(log) : [],
    }
  }

  async saveDocument(docName: string, state: Uint8Array) {
    await this.compactDocument(docName, state)
  }

  async appendUpdate(docName: string, update: Uint8Array) {
    await this.#exclusive(`${docName}\0log`, async () => {
      await mkdir(this.#folder(docName), { recursive: true })
      const header = Buffer.alloc(4)
      header.writeUInt32BE(update.byteLength)
      await appendFile(join(this.#folder(docName), 'updates.log'), Buffer.concat([header, update]))
    })
  }

  async compactDocument(docName: string, state: Uint8Array, merge?: MergeUpdates) {
    await this.#exclusive(`${docName}\0log`, async () => {
      await mkdir(this.#folder(docName), { recursive: true })
      if (merge) {
        const stored = await this.loadDocument(docName)
        const parts = [stored?.state, ...(stored?.updates ?? []), state].filter(
          (part): part is Uint8Array => Boolean(part?.byteLength)
        )
        state = parts.length > 1 ? merge(parts) : state
      }
      // state first: a crash between the two steps replays updates already in the state, which is harmless
      await writeAtomically(join(this.#folder(docName), 'state.bin'), state)
      await rm(join(this.#folder(docName), 'updates.log'), { force: true })
    })
  }

  async listVersions(docName: string, page?: ListPageOptions) {
    const versions = await this.#readJson<CollabVersion[]>(docName, 'versions.json', [])
    return slicePage(
      versions.sort((a, b) => b.seq - a.seq),
      page
    )
  }

  async saveVersion(docName: string, version: CollabVersion, snapshot: Uint8Array) {
    await this.#exclusive(docName, async () => {
      await mkdir(join(this.#folder(docName), 'versions'), { recursive: true })
      await writeAtomically(join(this.#folder(docName), 'versions', `${version.id}.bin`), snapshot)
      const versions = await this.#readJson<CollabVersion[]>(docName, 'versions.json', [])
      versions.push(version)
      await this.#writeJson(docName, 'versions.json', versions)
    })
  }

  async loadVersionSnapshot(docName: string, versionId: string) {
    if (!/^[\w-]+$/.test(versionId)) {
      return null
    }
    const content = await readOrNull(join(this.#folder(docName), 'versions', `${versionId}.bin`))
    return content ? new Uint8Array(content) : null
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
    const folders = docName !== undefined ? [] : await this.#documentFolders()
    const names = docName !== undefined ? [docName] : folders.flatMap(documentNameOf)
    let deleted = 0
    for (const name of names) {
      deleted += await this.#exclusive(name, async () => {
        const stored = await this.#readJson<CollabVersion[]>(name, 'versions.json', [])
        const versions = stored.sort((a, b) => b.seq - a.seq)
        const removed = versions.slice(Math.max(0, keep))
        if (!dryRun && removed.length) {
          await this.#writeJson(name, 'versions.json', versions.slice(0, Math.max(0, keep)))
          for (const version of removed) {
            await rm(join(this.#folder(name), 'versions', `${version.id}.bin`), { force: true })
          }
        }
        return removed.length
      })
    }
    return deleted
  }

  /** Folders under `baseDir`; none before the first document is written */
  async #documentFolders(): Promise<string[]> {
    try {
      return await readdir(this.baseDir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        return []
      }
      throw error
    }
  }

  async listComments(docName: string, space?: string, page?: ListPageOptions) {
    const comments = await this.#readJson<CollabComment[]>(docName, 'comments.json', [])
    return slicePage(
      comments
        .filter((comment) => space === undefined || comment.space === space)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
      page
    )
  }

  async getComment(docName: string, commentId: string) {
    const comments = await this.#readJson<CollabComment[]>(docName, 'comments.json', [])
    return comments.find((comment) => comment.id === commentId) ?? null
  }

  async saveComment(docName: string, comment: CollabComment) {
    await this.#exclusive(docName, async () => {
      const comments = await this.#readJson<CollabComment[]>(docName, 'comments.json', [])
      const index = comments.findIndex((existing) => existing.id === comment.id)
      if (index === -1) {
        comments.push(comment)
      } else {
        comments[index] = comment
      }
      await this.#writeJson(docName, 'comments.json', comments)
    })
  }

  async deleteComment(docName: string, commentId: string) {
    await this.#exclusive(docName, async () => {
      const comments = await this.#readJson<CollabComment[]>(docName, 'comments.json', [])
      await this.#writeJson(
        docName,
        'comments.json',
        comments.filter((comment) => comment.id !== commentId)
      )
    })
  }
}
