import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import type {
  CollabComment,
  CollabVersion,
  CollaborationStorage,
  ListPageOptions,
  StoredDocument,
} from '../types.ts'
import { pageBounds } from './paging.ts'

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

/**
 * The column type of binary states: `bytea` on PostgreSQL, `longblob` on MySQL, `blob` elsewhere.
 */
export function binaryColumnType(dialect: string) {
  return dialect === 'postgres' ? 'bytea' : dialect === 'mysql' ? 'longblob' : 'blob'
}

/**
 * Creates the four collaboration tables on a Lucid connection (the migration
 * published by `collaboration:init` creates the same).
 */
export async function createCollaborationTables(client: QueryClientContract, prefix = 'collab_') {
  const tables = collaborationTableNames(prefix)
  const binary = binaryColumnType(client.dialect.name)
  await client.schema.createTable(tables.documents, (table) => {
    table.string('name', 255).primary()
    table.specificType('state', binary).notNullable()
    table.string('updated_at', 40).notNullable()
  })
  await client.schema.createTable(tables.updates, (table) => {
    table.bigIncrements('id')
    table.string('document_name', 255).notNullable().index()
    table.specificType('update', binary).notNullable()
  })
  await client.schema.createTable(tables.versions, (table) => {
    table.string('id', 64).primary()
    table.string('document_name', 255).notNullable()
    table.integer('seq').notNullable()
    table.string('label', 255).nullable()
    table.string('created_by', 255).nullable()
    table.string('created_at', 40).notNullable()
    table.specificType('snapshot', binary).notNullable()
    table.unique(['document_name', 'seq'])
  })
  await client.schema.createTable(tables.comments, (table) => {
    table.string('id', 64).primary()
    table.string('document_name', 255).notNullable()
    table.string('space', 255).notNullable()
    table.text('anchor').notNullable()
    table.text('body').notNullable()
    table.string('user_id', 255).notNullable()
    table.string('author_name', 255).nullable()
    table.string('resolved_at', 40).nullable()
    table.string('created_at', 40).notNullable()
    table.string('updated_at', 40).nullable()
    table.index(['document_name', 'space'])
  })
}

/**
 * Drops the collaboration tables.
 */
export async function dropCollaborationTables(client: QueryClientContract, prefix = 'collab_') {
  const tables = collaborationTableNames(prefix)
  for (const table of [tables.comments, tables.versions, tables.updates, tables.documents]) {
    await client.schema.dropTableIfExists(table)
  }
}

export interface RelationalStorageOptions {
  /** Lucid connection name; the default connection when omitted */
  connection?: string
  /** A Lucid `Database`; the app's `db` service when omitted */
  db?: Database
  /** Table prefix, `collab_` by default */
  tablePrefix?: string
}

function bytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) {
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  }
  return new Uint8Array(Buffer.from(value as string))
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
  #db?: Database
  readonly tables: ReturnType<typeof collaborationTableNames>

  constructor(options: RelationalStorageOptions = {}) {
    this.#options = options
    this.#db = options.db
    this.tables = collaborationTableNames(options.tablePrefix)
  }

  async #client(): Promise<QueryClientContract> {
    if (!this.#db) {
      const { default: db } = await import('@adonisjs/lucid/services/db')
      this.#db = db
    }
    return this.#db.connection(this.#options.connection)
  }

  async loadDocument(docName: string): Promise<StoredDocument | null> {
    const client = await this.#client()
    const [document, updates] = await Promise.all([
      client.from(this.tables.documents).where('name', docName).select('state').first(),
      client
        .from(this.tables.updates)
        .where('document_name', docName)
        .orderBy('id', 'asc')
        .select('update'),
    ])
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
    const client = await this.#client()
    await client
      .table(this.tables.updates)
      .insert({ document_name: docName, update: Buffer.from(update) })
  }

  async compactDocument(docName: string, state: Uint8Array) {
    const client = await this.#client()
    await client.transaction(async (trx) => {
      const lastUpdate = await trx
        .from(this.tables.updates)
        .where('document_name', docName)
        .max('id as id')
        .first()
      await trx.from(this.tables.documents).where('name', docName).delete()
      await trx.table(this.tables.documents).insert({
        name: docName,
        state: Buffer.from(state),
        updated_at: new Date().toISOString(),
      })
      if (lastUpdate?.id !== null && lastUpdate?.id !== undefined) {
        await trx
          .from(this.tables.updates)
          .where('document_name', docName)
          .where('id', '<=', lastUpdate.id)
          .delete()
      }
    })
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
    const client = await this.#client()
    await client.table(this.tables.versions).insert({
      id: version.id,
      document_name: docName,
      seq: version.seq,
      label: version.label,
      created_by: version.createdBy,
      created_at: version.createdAt,
      snapshot: Buffer.from(snapshot),
    })
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
 * Storage on a Lucid connection, in the `collab_*` tables the
 * `collaboration:init` migration creates.
 */
export function relationalStorage(options: RelationalStorageOptions = {}) {
  return new RelationalCollaborationStorage(options)
}
