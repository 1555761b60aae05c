import { randomUUID } from 'node:crypto'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import type { ApplicationService } from '@adonisjs/core/types'

/** What the gateway keeps about an attachment: never its bytes in the database */
export interface StagedAttachment {
  id: string
  /** The actor who uploaded or sent it: the only one who may use it */
  actorRef: string
  name: string
  contentType: string
  size: number
}

/**
 * Where attachment bytes live between the upload (or the chat that sent
 * them inline) and every model call that replays the message. The spec's
 * `AGENT_ATTACHMENT_STAGING`.
 */
export interface AttachmentStaging {
  /** Keeps the bytes under a new unguessable id */
  put(attachment: Omit<StagedAttachment, 'id'>, data: Uint8Array): Promise<StagedAttachment>
  /** The attachment and its bytes; null when the id is unknown or its bytes are gone */
  get(id: string): Promise<{ attachment: StagedAttachment; data: Uint8Array } | null>
  /**
   * Deletes the bytes and metadata of `id`; nothing when they are gone already.
   * Without it the gateway never deletes an attachment.
   */
  delete?(id: string): Promise<void>
  /**
   * Every kept attachment id and when it was stored, for `node ace agent:prune`
   * to find the uploads no message references; without it they are kept
   */
  list?(): AsyncIterable<{ id: string; storedAt: Date }>
}

/** `attachments.staging`: a staging, or a factory the provider calls once at boot */
export type AttachmentStagingFactory =
  AttachmentStaging | ((app: ApplicationService) => AttachmentStaging | Promise<AttachmentStaging>)

/** Ids the file-system staging writes: nothing else reaches the disk as a path */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * A staging on the local disk: `<id>.bin` holds the bytes and `<id>.json`
 * the metadata. One instance (or a shared volume) serves every read.
 */
export class FileSystemAttachmentStaging implements AttachmentStaging {
  #directory: string
  #ready?: Promise<unknown>

  constructor(directory: string) {
    this.#directory = directory
  }

  async put(attachment: Omit<StagedAttachment, 'id'>, data: Uint8Array) {
    this.#ready ??= mkdir(this.#directory, { recursive: true })
    await this.#ready
    const staged: StagedAttachment = { id: randomUUID(), ...attachment }
    // The bytes first: a metadata file always has its bytes beside it
    await writeFile(join(this.#directory, `${staged.id}.bin`), data)
    await writeFile(join(this.#directory, `${staged.id}.json`), JSON.stringify(staged))
    return staged
  }

  async get(id: string) {
    if (!UUID.test(id)) return null
    try {
      const attachment = JSON.parse(
        await readFile(join(this.#directory, `${id}.json`), 'utf8')
      ) as StagedAttachment
      const data = await readFile(join(this.#directory, `${id}.bin`))
      return { attachment, data: new Uint8Array(data) }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  async delete(id: string) {
    if (!UUID.test(id)) return
    // The metadata first: an id without it reads as gone even if the bytes outlive a crash
    await rm(join(this.#directory, `${id}.json`), { force: true })
    await rm(join(this.#directory, `${id}.bin`), { force: true })
  }

  /** Each id with bytes or metadata on disk (a crash between the two writes leaves bytes alone) */
  async *list() {
    let names: string[]
    try {
      names = await readdir(this.#directory)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    const ids = new Set(
      names.map((name) => name.replace(/\.(bin|json)$/, '')).filter((id) => UUID.test(id))
    )
    for (const id of ids) {
      const times = await Promise.all(
        ['bin', 'json'].map((extension) =>
          stat(join(this.#directory, `${id}.${extension}`)).then(
            (stats) => stats.mtimeMs,
            () => 0
          )
        )
      )
      const storedAt = Math.max(...times)
      // Deleted while listing: nothing left to report
      if (storedAt > 0) yield { id, storedAt: new Date(storedAt) }
    }
  }
}

/** Ready stagings for `attachments.staging` */
export const stagings = {
  /**
   * Files on the local disk, in `tmp/agent-attachments` of the app by
   * default (a relative `directory` is read from the app root)
   */
  fs(options: { directory?: string } = {}) {
    return (app: ApplicationService): AttachmentStaging => {
      const directory = options.directory ?? app.tmpPath('agent-attachments')
      return new FileSystemAttachmentStaging(
        isAbsolute(directory) ? directory : app.makePath(directory)
      )
    }
  },
}
