import type { Database } from '@adonisjs/lucid/database'
import type { ModelQueryBuilderContract } from '@adonisjs/lucid/types/model'
import ConsoleEntryModel from '../models/console_entry.ts'
import {
  INSERT_CHUNK,
  flatChunks,
  insertEntries,
  SQLITE_INSERT,
  SQLITE_INSERT_VALUES,
} from './bulk_insert.ts'
import { SqliteWriter } from './sqlite_writer.ts'
import { addRollups, deleteRollupsBefore, readRollups, ROLLUPS_TABLE } from './lucid_rollups.ts'
import { rollupsOf } from '../rollups/route_minute.ts'
import { hasSearchIndex, searchUnavailable, whereSummaryHas } from './lucid_search.ts'
import { acquireLease, LEASES_TABLE, releaseLease } from './lucid_leases.ts'
import debug from '../debug.ts'
import { sqliteFileBytes, type EmbeddedStorage } from './embedded.ts'
import { retryingTransaction } from '../../shared/transactions.ts'
import type { ConsoleEntry, ConsoleEntrySummary, EntryType } from '../types.ts'
import type {
  ConsoleStore,
  EntryListQuery,
  EntryPage,
  Lease,
  PruneStep,
  StoreDescription,
  StoredRows,
} from './contract.ts'

const SUMMARY_COLUMNS = [
  'id',
  'batch_id',
  'type',
  'summary',
  'status',
  'method',
  'duration_ms',
  'slow',
  'tags',
  'created_at',
]

/** A query over `console_entries` */
type EntriesQuery = ModelQueryBuilderContract<typeof ConsoleEntryModel, any>

/** Newest entries a search reads before it asks the search index for every match */
const SEARCH_WINDOW = 2000

/** A page of `limit` summaries from up to `limit + 1` rows */
function pageOf(rows: any[], limit: number): EntryPage {
  const page = rows.slice(0, limit).map(summaryOf)
  return { data: page, nextCursor: rows.length > limit ? page[page.length - 1].id : null }
}

function summaryOf(model: ConsoleEntryModel): ConsoleEntrySummary {
  return {
    id: model.id,
    batchId: model.batchId,
    type: model.type,
    summary: model.summary,
    status: model.status,
    method: model.method,
    durationMs: model.durationMs,
    slow: model.slow,
    tags: model.tags,
    createdAt: model.createdAt,
  }
}

function entryOf(model: ConsoleEntryModel): ConsoleEntry {
  return { ...summaryOf(model), content: model.content }
}

/** Options of the Lucid store beyond its connection */
export interface LucidStoreOptions {
  /** False keeps SQLite flushes and prune deletes on the main thread */
  writerThread?: boolean
  /** Set by `stores.embedded()`: what it resolved to at boot */
  embedded?: EmbeddedStorage
}

/**
 * Entries in `console_entries` through the `ConsoleEntryModel` Lucid model,
 * on the app's default connection, the one named in `stores.database()`, or
 * the `console` connection of `stores.embedded()`.
 * A flush is one transaction of bulk inserts (see bulk_insert.ts).
 */
export class LucidConsoleStore implements ConsoleStore {
  #db: Database
  #connection?: string
  #writer?: SqliteWriter
  #hasRollups?: Promise<boolean>
  #embedded?: EmbeddedStorage

  constructor(db: Database, connection?: string, options: LucidStoreOptions = {}) {
    this.#db = db
    this.#connection = connection
    this.#embedded = options.embedded
    if (options.writerThread !== false) {
      const config = db.manager.get(connection ?? db.primaryConnectionName)?.config
      if (config) {
        this.#writer = SqliteWriter.forConnection(
          config.client,
          config.connection,
          options.embedded?.owned === true
        )
      }
    }
  }

  /** True when flushes and prune deletes run on the SQLite writer thread */
  get threaded() {
    return this.#writer !== undefined
  }

  #client() {
    return this.#db.connection(this.#connection)
  }

  #query() {
    return ConsoleEntryModel.query({ client: this.#client() })
  }

  /**
   * Whether `console_rollups` exists, checked once: an app that has not run
   * the rollups migration yet keeps recording entries, without rollups.
   */
  #rollupsTable() {
    this.#hasRollups ??= this.#client()
      .schema.hasTable(ROLLUPS_TABLE)
      .then((exists) => {
        if (!exists) debug('no %s table: flushes write entries only', ROLLUPS_TABLE)
        return exists
      })
      .catch(() => false)
    return this.#hasRollups
  }

  async write(entries: ConsoleEntry[]) {
    if (entries.length === 0) return
    const rollups = (await this.#rollupsTable()) ? rollupsOf(entries) : []
    if (this.#writer)
      return this.#writer.write(
        { values: SQLITE_INSERT_VALUES, unpack: SQLITE_INSERT },
        flatChunks(entries),
        rollups
      )
    const client = this.#client()
    // one statement is atomic on its own; more chunks, or rollups, share one transaction
    if (entries.length <= INSERT_CHUNK && rollups.length === 0) {
      return insertEntries(client, entries)
    }
    await retryingTransaction(
      client,
      async (trx) => {
        await insertEntries(trx, entries)
        await addRollups(trx, rollups)
      },
      (code) => debug('console flush retried after %s', code)
    )
  }

  async rollups(fromMinute: number, toMinute: number) {
    if (!(await this.#rollupsTable())) return []
    return readRollups(this.#client(), fromMinute, toMinute)
  }

  /** One grouped count over the `(type, id)` index, and the rollup rows */
  async countRows() {
    const client = this.#client()
    const groups = await client
      .from(ConsoleEntryModel.table)
      .select('type')
      .count('* as total')
      .groupBy('type')
    const entries: StoredRows['entries'] = {}
    for (const group of groups) entries[group.type as EntryType] = Number(group.total)
    let rollups = 0
    if (await this.#rollupsTable()) {
      const row = await client.from(ROLLUPS_TABLE).count('* as total').first()
      rollups = Number(row?.total ?? 0)
    }
    return { entries, rollups }
  }

  async deleteRollupsBefore(beforeMinute: number, limit: number) {
    if (!(await this.#rollupsTable())) return 0
    if (this.#writer) return this.#writer.deleteRollupsBefore(beforeMinute, limit)
    return deleteRollupsBefore(this.#client(), beforeMinute, limit)
  }

  /** The connection, its client and file, and whether `console_entries` exists on it */
  async describe(): Promise<StoreDescription> {
    const connection = this.#connection ?? this.#db.primaryConnectionName
    const config = this.#db.manager.get(connection)?.config
    const description: StoreDescription = {
      driver: this.#embedded ? 'embedded' : 'database',
      connection,
      threaded: this.threaded,
      ready: false,
    }
    if (this.#embedded) description.owned = this.#embedded.owned
    if (!config) {
      description.problem = `connection "${connection}" is not defined in config/database.ts`
      return description
    }
    description.client = config.client
    const filename = (config.connection as { filename?: unknown } | undefined)?.filename
    if (typeof filename === 'string') {
      description.file = filename
      description.bytes = await sqliteFileBytes(filename)
    }
    try {
      description.ready = await this.#client().schema.hasTable(ConsoleEntryModel.table)
      if (!description.ready) {
        description.problem = `table "${ConsoleEntryModel.table}" is missing on connection "${connection}": run "node ace migration:run" (the console_entries migration)`
      }
      description.rollups = await this.#client().schema.hasTable(ROLLUPS_TABLE)
      description.search = await hasSearchIndex(this.#client())
      description.leases = await this.#client().schema.hasTable(LEASES_TABLE)
      const present: [string, boolean | undefined][] = [
        [ConsoleEntryModel.table, description.ready],
        [ROLLUPS_TABLE, description.rollups],
        ['console_entries_search', description.search],
        [LEASES_TABLE, description.leases],
      ]
      description.tables = present.filter(([, exists]) => exists).map(([table]) => table)
    } catch (error) {
      description.problem = `connection "${connection}" failed: ${(error as Error).message}`
    }
    return description
  }

  async close() {
    await this.#writer?.close()
  }

  async list(query: EntryListQuery): Promise<EntryPage> {
    if (!query.words?.length) return pageOf(await this.#summaries(query), query.limit)
    // A search reads the newest SEARCH_WINDOW entries the other filters keep first: when they
    // hold a full page of matches, those are exactly the newest matches, found without reading
    // the index's every match (a common word is in tens of thousands of summaries)
    const [windowEnd] = await this.#filtered(this.#query().select('id'), query)
      .orderBy('id', 'desc')
      .offset(SEARCH_WINDOW - 1)
      .limit(1)
    const recent = await this.#summaries(query, { from: windowEnd?.id ?? null })
    if (recent.length > query.limit || !windowEnd) return pageOf(recent, query.limit)
    return pageOf(await this.#summaries(query), query.limit)
  }

  /** The query's filters other than its words */
  #filtered<Builder extends EntriesQuery>(builder: Builder, query: EntryListQuery): Builder {
    if (query.type) builder.where('type', query.type)
    if (query.before) builder.where('id', '<', query.before)
    if (query.since) builder.where('id', '>=', query.since)
    if (query.status !== undefined) builder.where('status', query.status)
    if (query.statusClass !== undefined) {
      builder.whereBetween('status', [query.statusClass * 100, query.statusClass * 100 + 99])
    }
    if (query.method) builder.where('method', query.method)
    // tags are checked against [A-Za-z0-9:.-], so no LIKE wildcard reaches the pattern
    if (query.tag) builder.where('tags', 'like', `%,${query.tag},%`)
    if (query.slow) builder.where('slow', true)
    return builder
  }

  /**
   * Up to `limit + 1` summaries, newest first; with `window`, a search of
   * the entries from `window.from` on only (all of them when null), read in
   * id order rather than from the search index
   */
  async #summaries(query: EntryListQuery, window?: { from: string | null }) {
    const builder = this.#filtered(this.#query().select(SUMMARY_COLUMNS), query)
      .orderBy('id', 'desc')
      .limit(query.limit + 1)
    if (!query.words?.length) return builder
    if (window?.from) builder.where('id', '>=', window.from)
    whereSummaryHas(builder, this.#client().dialect.name, query.words, {
      inIdOrder: window !== undefined,
    })
    return builder.catch(searchUnavailable)
  }

  async find(id: string) {
    const model = await this.#query().where('id', id).first()
    return model ? entryOf(model) : null
  }

  async updateContent(id: string, content: Record<string, unknown>) {
    const updated = await this.#client()
      .from(ConsoleEntryModel.table)
      .where('id', id)
      .update({ content: JSON.stringify(content) })
    // drivers count differently: pg and SQLite return a number, mysql2 an array of one
    return Number(Array.isArray(updated) ? updated[0] : updated) > 0
  }

  async batch(batchId: string) {
    const models = await this.#query().where('batch_id', batchId).orderBy('id', 'asc')
    return models.map(entryOf)
  }

  async idAfterNewest(type: EntryType, keep: number) {
    const row = await this.#client()
      .from(ConsoleEntryModel.table)
      .select('id')
      .where('type', type)
      .orderBy('id', 'desc')
      .offset(keep - 1)
      .limit(1)
      .first()
    return row ? (row.id as string) : null
  }

  /** On the SQLite writer thread when there is one: a synchronous delete would block the app */
  async deleteBelow(step: PruneStep) {
    if (this.#writer) return this.#writer.deleteBelow(step.type, step.belowId, step.limit)
    const ids = await this.#client()
      .from(ConsoleEntryModel.table)
      .select('id')
      .where('type', step.type)
      .where('id', '<', step.belowId)
      .orderBy('id', 'asc')
      .limit(step.limit)
    if (ids.length === 0) return 0
    return Number(
      await this.#client()
        .from(ConsoleEntryModel.table)
        .whereIn(
          'id',
          ids.map((row: { id: string }) => row.id)
        )
        .delete()
    )
  }

  async entriesBelow(step: PruneStep) {
    const models = await this.#query()
      .where('type', step.type)
      .where('id', '<', step.belowId)
      .orderBy('id', 'asc')
      .limit(step.limit)
    return models.map(entryOf)
  }

  async deleteEntries(ids: string[]) {
    if (ids.length === 0) return 0
    if (this.#writer) return this.#writer.deleteEntries(ids)
    return Number(await this.#client().from(ConsoleEntryModel.table).whereIn('id', ids).delete())
  }

  acquireLease(lease: Lease) {
    return acquireLease(this.#client(), lease)
  }

  releaseLease(name: string, owner: string, handOver?: { owner: string; expiresAt: number }) {
    return releaseLease(this.#client(), name, owner, handOver)
  }
}
