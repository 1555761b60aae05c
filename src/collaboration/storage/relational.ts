import { configProvider } from '@adonisjs/core'
import type { ConfigProvider } from '@adonisjs/core/types'
import type { Database } from '@adonisjs/lucid/database'
import { assertDocumentName } from '../document_name.ts'
import { CollabConfigError, CollabStorageError } from '../errors.ts'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type {
  CollabComment,
  CollabVersion,
  CollaborationStorage,
  MergeUpdates,
  ListPageOptions,
  StoredDocument,
} from '../types.ts'
import { pageBounds } from './paging.ts'
import { bytes, compactStoredDocument } from './relational_compaction.ts'

/**
 * Names of the tables, from one prefix (`collab_` by default).
 */
export function collaborationTableNames(prefix = 'collab_') {
  return {
    documents: `${prefix}documents`,
    updates: `${prefix}updates`,
    versions: `${prefix}versions`,
    comments: `${prefix}comments`,
  }
}

/** Longest value of each `varchar` column, as the migration declares it */
const STRING_COLUMNS = {
  name: 255,
  document_name: 255,
  id: 64,
  label: 255,
  created_by: 255,
  created_at: 40,
  updated_at: 40,
  resolved_at: 40,
  space: 255,
  user_id: 255,
  author_name: 255,
} as const

/** `mediumtext` on MySQL, the smallest of the three dialects' text columns */
const MAX_TEXT_BYTES = 16 * 1024 * 1024 - 1

/**
 * Refuses a row a column would cut: MySQL outside strict mode truncates a
 * long `varchar` silently, and a cut comment or name is lost data. JavaScript
 * lengths count UTF-16 units, never fewer than the database's characters.
 */
function assertFits(table: string, row: Record<string, unknown>) {
  for (const [column, value] of Object.entries(row)) {
    if (typeof value !== 'string') {
      continue
    }
    const max = STRING_COLUMNS[column as keyof typeof STRING_COLUMNS]
    if (max !== undefined ? value.length > max : Buffer.byteLength(value) > MAX_TEXT_BYTES) {
      throw new CollabStorageError(
        `Cannot store ${table}.${column}: the value is longer than the column holds (${max ?? MAX_TEXT_BYTES}${max === undefined ? ' bytes' : ' characters'})`,
        { details: { column: `${table}.${column}` } }
      )
    }
  }
}

/**
 * Options of `relationalStorage()`.
 */
export interface RelationalStorageOptions {
  /** Lucid connection name; the default connection when omitted */
  connection?: string
  /** Table prefix, `collab_` by default */
  tablePrefix?: string
}

function commentFromRow(row: any): CollabComment {
  return {
    id: row.id,
    documentName: row.document_name,
    space: row.space,
    anchor: JSON.parse(row.anchor),
    body: row.body,
    userId: row.user_id,
    authorName: row.author_name ?? null,
    resolvedAt: row.resolved_at ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at ?? null,
  }
}

function versionFromRow(row: any): CollabVersion {
  return {
    id: row.id,
    seq: Number(row.seq),
    label: row.label ?? null,
    createdBy: row.created_by ?? null,
    createdAt: row.created_at,
  }
}

/**
 * Stores documents, the update log, versions and comments in `collab_*`
 * tables through Lucid.
 */
export class RelationalCollaborationStorage implements CollaborationStorage {
  #options: RelationalStorageOptions
  #db: Database
  readonly tables: ReturnType<typeof collaborationTableNames>

  constructor(options: RelationalStorageOptions & { db: Database }) {
    this.#options = options
    this.#db = options.db
    this.tables = collaborationTableNames(options.tablePrefix)
  }

  async #client(): Promise<QueryClientContract> {
    return this.#db.connection(this.#options.connection)
  }

  /**
   * Checks once at boot that the migration ran: the tables are never
   * created at runtime.
   */
  async assertReady() {
    const client = await this.#client()
    const tables = Object.values(this.tables)
    const missing: string[] = []
    for (const table of tables) {
      if (!(await client.schema.hasTable(table))) {
        missing.push(table)
      }
    }
    if (missing.length) {
      throw new CollabConfigError(
        `The collaboration tables ${missing.join(', ')} do not exist. Run "node ace migration:run" (the migration is published by "node ace configure adonis-atrium --features=collaboration")`
      )
    }
  }

  async loadDocument(docName: string): Promise<StoredDocument | null> {
    const client = await this.#client()
    // The log first, then the state: a compaction committing between the two
    // reads then gives the new state plus updates it already holds (replaying
    // them is harmless), where the other order could give no state and an
    // emptied log, a document that looks never stored
    const updates = await client
      .from(this.tables.updates)
      .where('document_name', docName)
      .orderBy('id', 'asc')
      .select('update')
    const document = await client
      .from(this.tables.documents)
      .where('name', docName)
      .select('state')
      .first()
    if (!document && updates.length === 0) {
      return null
    }
    return {
      state: document ? bytes(document.state) : new Uint8Array(0),
      updates: updates.map((row: any) => bytes(row.update)),
    }
  }

  async saveDocument(docName: string, state: Uint8Array) {
    await this.compactDocument(docName, state)
  }

  async appendUpdate(docName: string, update: Uint8Array) {
    assertDocumentName(docName)
    const client = await this.#client()
    await client
      .table(this.tables.updates)
      .insert({ document_name: docName, update: Buffer.from(update) })
  }

  async compactDocument(docName: string, state: Uint8Array, merge?: MergeUpdates) {
    assertDocumentName(docName)
    await compactStoredDocument(await this.#client(), this.tables, docName, state, merge)
  }

  async listVersions(docName: string, page?: ListPageOptions) {
    const client = await this.#client()
    const query = client
      .from(this.tables.versions)
      .where('document_name', docName)
      .orderBy('seq', 'desc')
      .select('id', 'seq', 'label', 'created_by', 'created_at')
    const bounds = pageBounds(page)
    if (bounds) {
      query.offset(bounds.offset).limit(bounds.limit)
    }
    const rows = await query
    return rows.map(versionFromRow)
  }

  async saveVersion(docName: string, version: CollabVersion, snapshot: Uint8Array) {
    assertDocumentName(docName)
    const row = {
      id: version.id,
      document_name: docName,
      seq: version.seq,
      label: version.label,
      created_by: version.createdBy,
      created_at: version.createdAt,
      snapshot: Buffer.from(snapshot),
    }
    assertFits(this.tables.versions, row)
    const client = await this.#client()
    await client.table(this.tables.versions).insert(row)
  }

  async loadVersionSnapshot(docName: string, versionId: string) {
    const client = await this.#client()
    const row = await client
      .from(this.tables.versions)
      .where('document_name', docName)
      .where('id', versionId)
      .select('snapshot')
      .first()
    return row ? bytes(row.snapshot) : null
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
    const client = await this.#client()
    const query = client.from(this.tables.versions).select('id', 'document_name', 'seq')
    if (docName !== undefined) {
      query.where('document_name', docName)
    }
    const rows = await query.orderBy('document_name').orderBy('seq', 'desc')
    const seen = new Map<string, number>()
    const doomed: string[] = []
    for (const row of rows) {
      const count = (seen.get(row.document_name) ?? 0) + 1
      seen.set(row.document_name, count)
      if (count > Math.max(0, keep)) {
        doomed.push(row.id)
      }
    }
    if (!dryRun) {
      for (let index = 0; index < doomed.length; index += 500) {
        await client
          .from(this.tables.versions)
          .whereIn('id', doomed.slice(index, index + 500))
          .delete()
      }
    }
    return doomed.length
  }

  async listComments(docName: string, space?: string, page?: ListPageOptions) {
    const client = await this.#client()
    const query = client.from(this.tables.comments).where('document_name', docName)
    if (space !== undefined) {
      query.where('space', space)
    }
    query.orderBy('created_at', 'asc').orderBy('id', 'asc')
    const bounds = pageBounds(page)
    if (bounds) {
      query.offset(bounds.offset).limit(bounds.limit)
    }
    const rows = await query
    return rows.map(commentFromRow)
  }

  async getComment(docName: string, commentId: string) {
    const client = await this.#client()
    const row = await client
      .from(this.tables.comments)
      .where('document_name', docName)
      .where('id', commentId)
      .first()
    return row ? commentFromRow(row) : null
  }

  async saveComment(docName: string, comment: CollabComment) {
    assertDocumentName(docName)
    const client = await this.#client()
    const row = {
      id: comment.id,
      document_name: docName,
      space: comment.space,
      anchor: JSON.stringify(comment.anchor),
      body: comment.body,
      user_id: comment.userId,
      author_name: comment.authorName ?? null,
      resolved_at: comment.resolvedAt,
      created_at: comment.createdAt,
      updated_at: comment.updatedAt,
    }
    assertFits(this.tables.comments, row)
    const updated = await client
      .from(this.tables.comments)
      .where('id', comment.id)
      .where('document_name', docName)
      .update({ ...row, id: undefined })
    const count = Array.isArray(updated) ? Number(updated[0] ?? 0) : Number(updated)
    if (!count) {
      await client.table(this.tables.comments).insert(row)
    }
  }

  async deleteComment(docName: string, commentId: string) {
    const client = await this.#client()
    await client
      .from(this.tables.comments)
      .where('document_name', docName)
      .where('id', commentId)
      .delete()
  }
}

/**
 * Storage on a Lucid connection, in the `collab_*` tables the published
 * migration creates. Lucid's `db` comes from the app when the config
 * resolves, unless `db` is given.
 */
export function relationalStorage(
  options: RelationalStorageOptions & { db: Database }
): RelationalCollaborationStorage
export function relationalStorage(
  options?: RelationalStorageOptions
): ConfigProvider<CollaborationStorage>
export function relationalStorage(
  options: RelationalStorageOptions & { db?: Database } = {}
): RelationalCollaborationStorage | ConfigProvider<CollaborationStorage> {
  // a given Database (scripts, tests) needs no app
  if (options.db) {
    return new RelationalCollaborationStorage({ ...options, db: options.db })
  }
  return configProvider.create(async (app) => {
    const db = await app.container.make('lucid.db')
    return new RelationalCollaborationStorage({ ...options, db })
  })
}
