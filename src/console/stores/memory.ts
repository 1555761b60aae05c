import {
  addRollup,
  compareRollups,
  rollupKey,
  rollupsOf,
  type RouteMinute,
} from '../rollups/route_minute.ts'
import { summaryMatches } from '../search.ts'
import type { ConsoleEntry, EntryType } from '../types.ts'
import type {
  ConsoleStore,
  EntryListQuery,
  Lease,
  EntryPage,
  PruneStep,
  StoreDescription,
  StoredRows,
} from './contract.ts'

/**
 * Entries in process memory, for tests and throwaway setups: lost on restart.
 */
export class MemoryConsoleStore implements ConsoleStore {
  #entries = new Map<string, ConsoleEntry>()
  #rollups = new Map<string, RouteMinute>()
  #leases = new Map<string, { owner: string; expiresAt: number }>()

  async describe(): Promise<StoreDescription> {
    return { driver: 'memory', ready: true }
  }

  async write(entries: ConsoleEntry[]) {
    for (const entry of entries) this.#entries.set(entry.id, structuredClone(entry))
    for (const row of rollupsOf(entries)) {
      const key = rollupKey(row)
      const stored = this.#rollups.get(key)
      this.#rollups.set(key, stored ? addRollup(stored, row) : row)
    }
  }

  async rollups(fromMinute: number, toMinute: number) {
    return [...this.#rollups.values()]
      .filter((row) => row.minute >= fromMinute && row.minute < toMinute)
      .sort(compareRollups)
      .map((row) => ({ ...row }))
  }

  async countRows() {
    const entries: StoredRows['entries'] = {}
    for (const entry of this.#entries.values()) entries[entry.type] = (entries[entry.type] ?? 0) + 1
    return { entries, rollups: this.#rollups.size }
  }

  async deleteRollupsBefore(beforeMinute: number, limit: number) {
    const doomed = [...this.#rollups.values()]
      .filter((row) => row.minute < beforeMinute)
      .sort(compareRollups)
      .slice(0, limit)
    for (const row of doomed) this.#rollups.delete(rollupKey(row))
    return doomed.length
  }

  #sorted(type?: EntryType) {
    return [...this.#entries.values()]
      .filter((entry) => !type || entry.type === type)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  async list(query: EntryListQuery): Promise<EntryPage> {
    const matches = this.#sorted(query.type)
      .reverse()
      .filter(
        (entry) =>
          (!query.before || entry.id < query.before) &&
          (!query.since || entry.id >= query.since) &&
          (query.status === undefined || entry.status === query.status) &&
          (query.statusClass === undefined ||
            Math.floor((entry.status ?? 0) / 100) === query.statusClass) &&
          (!query.method || entry.method === query.method) &&
          (!query.tag || entry.tags.includes(query.tag)) &&
          (!query.slow || entry.slow) &&
          (!query.words || summaryMatches(entry.summary, query.words))
      )
    const page = matches.slice(0, query.limit).map(({ content: _content, ...summary }) => summary)
    return {
      data: page,
      nextCursor: matches.length > query.limit ? page[page.length - 1].id : null,
    }
  }

  async find(id: string) {
    return structuredClone(this.#entries.get(id) ?? null)
  }

  async updateContent(id: string, content: Record<string, unknown>) {
    const entry = this.#entries.get(id)
    if (!entry) return false
    entry.content = structuredClone(content)
    return true
  }

  async batch(batchId: string) {
    return this.#sorted().filter((entry) => entry.batchId === batchId)
  }

  async idAfterNewest(type: EntryType, keep: number) {
    return this.#sorted(type).reverse()[keep - 1]?.id ?? null
  }

  async deleteBelow(step: PruneStep) {
    const doomed = this.#sorted(step.type)
      .filter((entry) => entry.id < step.belowId)
      .slice(0, step.limit)
    for (const entry of doomed) this.#entries.delete(entry.id)
    return doomed.length
  }

  async entriesBelow(step: PruneStep) {
    return this.#sorted(step.type)
      .filter((entry) => entry.id < step.belowId)
      .slice(0, step.limit)
      .map((entry) => structuredClone(entry))
  }

  async deleteEntries(ids: string[]) {
    let deleted = 0
    for (const id of ids) if (this.#entries.delete(id)) deleted++
    return deleted
  }

  async acquireLease({ name, owner, expiresAt, yieldingOwner }: Lease) {
    const held = this.#leases.get(name)
    const free =
      !held || held.owner === owner || held.owner === yieldingOwner || held.expiresAt <= Date.now()
    if (!free) return false
    this.#leases.set(name, { owner, expiresAt })
    return true
  }

  async releaseLease(name: string, owner: string, handOver?: { owner: string; expiresAt: number }) {
    if (this.#leases.get(name)?.owner !== owner) return
    if (handOver) this.#leases.set(name, handOver)
    else this.#leases.delete(name)
  }
}
