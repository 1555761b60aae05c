import type { RouteMinute } from '../rollups/route_minute.ts'
import type { ConsoleEntry, ConsoleEntrySummary, EntryType } from '../types.ts'

/** Filters of a list request; every field optional */
export interface EntryListQuery {
  /** Every type when absent (`console:list` without `--type`) */
  type?: EntryType
  /** Keyset cursor: entries older than this id */
  before?: string
  /** Entries at or newer than this id (`idAtTime(since)`) */
  since?: string
  limit: number
  status?: number
  /** `2xx` .. `5xx` */
  statusClass?: number
  method?: string
  tag?: string
  slow?: boolean
  /** Entries whose summary has every one of these words (lowercased letters and digits) */
  words?: string[]
}

/** One page of summaries; `nextCursor` is null on the last page */
export interface EntryPage {
  data: ConsoleEntrySummary[]
  nextCursor: string | null
}

/** What one prune deleted per type, and rollup rows under `rollups` */
export type PruneResult = Partial<Record<EntryType | 'rollups', number>>

/** What `countRows()` reports */
export interface StoredRows {
  entries: Partial<Record<EntryType, number>>
  rollups: number
}

/** One bounded delete step, so a prune can pause between batches */
export interface PruneStep {
  type: EntryType
  /** Ids strictly below this one are deleted (the cutoff of an age or a row cap) */
  belowId: string
  limit: number
}

/** A named lease a fleet takes turns through (`console_leases`) */
export interface Lease {
  name: string
  owner: string
  expiresAt: number
  /** An owner whose lease may be taken before it expires */
  yieldingOwner?: string
}

/** Where a store writes, for `console:doctor` */
export interface StoreDescription {
  driver: string
  connection?: string
  /** The Lucid client: `better-sqlite3`, `pg`, `mysql2`... */
  client?: string
  /** The SQLite file, when the connection is one */
  file?: string
  /** Flushes run on the SQLite writer thread */
  threaded?: boolean
  /** False when entries cannot be written (a missing table, an unknown connection) */
  ready: boolean
  /** Why it is not ready, and the fix */
  problem?: string
  /** False when `console_rollups` is missing: entries are written, the health page has no traffic */
  rollups?: boolean
  /** False when `console_leases` is missing: prunes under the default lock fail */
  leases?: boolean
  /** False when the console_entries_search migration has not run: search answers 503 */
  search?: boolean
  /**
   * `stores.embedded()`: whether the console created the file and migrates it
   * at boot (false when config/database.ts defines the `console` connection)
   */
  owned?: boolean
  /** Bytes of the SQLite file with its write-ahead log */
  bytes?: number
  /** The console's tables present on the connection */
  tables?: string[]
}

/**
 * Where entries live. One class per backend (Lucid, memory), chosen once from
 * `storage` in config/console.ts.
 */
export interface ConsoleStore {
  /**
   * Writes a flush's entries and adds their per-minute route rollups at once
   * (one transaction), or throws
   */
  write(entries: ConsoleEntry[]): Promise<void>
  /** Rollup rows of the minutes from `fromMinute` (included) to `toMinute` (excluded), Unix ms */
  rollups(fromMinute: number, toMinute: number): Promise<RouteMinute[]>
  /** Stored rows: entries per type (types without rows are absent) and rollup rows */
  countRows(): Promise<StoredRows>
  /** Deletes at most `limit` rollup rows of minutes before `beforeMinute`; returns how many */
  deleteRollupsBefore(beforeMinute: number, limit: number): Promise<number>
  list(query: EntryListQuery): Promise<EntryPage>
  find(id: string): Promise<ConsoleEntry | null>
  /**
   * Replaces one entry's content (an exception's stored AI diagnosis);
   * false when the entry is gone (pruned meanwhile)
   */
  updateContent(id: string, content: Record<string, unknown>): Promise<boolean>
  /** Every entry of one batch, oldest first */
  batch(batchId: string): Promise<ConsoleEntry[]>
  /** The id below which only `keep` newest rows of a type remain, or null when fewer exist */
  idAfterNewest(type: EntryType, keep: number): Promise<string | null>
  /** Deletes at most `limit` entries of `type` with ids below `belowId`; returns how many */
  deleteBelow(step: PruneStep): Promise<number>
  /** At most `limit` whole entries of `type` with ids below `belowId`, oldest first (to archive) */
  entriesBelow(step: PruneStep): Promise<ConsoleEntry[]>
  /** Deletes these entries; returns how many there were */
  deleteEntries(ids: string[]): Promise<number>
  /**
   * Takes the lease `name` for `owner` until `expiresAt` (Unix ms) when it is
   * free, expired or held by `yieldingOwner`; false when another owner holds it
   */
  acquireLease(lease: Lease): Promise<boolean>
  /**
   * Gives the lease back if `owner` still holds it: deletes it, or hands it
   * to `handOver` (an owner and an expiry)
   */
  releaseLease(
    name: string,
    owner: string,
    handOver?: { owner: string; expiresAt: number }
  ): Promise<void>
  close?(): Promise<void>
  /** What `console:doctor` prints about this store */
  describe?(): Promise<StoreDescription>
}
