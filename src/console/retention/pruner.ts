import { setTimeout as sleep } from 'node:timers/promises'
import debug from '../debug.ts'
import { idAtTime } from '../ids.ts'
import { minuteOf } from '../rollups/route_minute.ts'
import { ConsoleArchiveFailedException } from '../errors.ts'
import type { ConsoleStore, PruneResult, PruneStep } from '../stores/contract.ts'
import type { ArchiveSink, EntryType, ResolvedPrune } from '../types.ts'
import { ENTRY_TYPES } from '../types.ts'

/**
 * Deletes entries older than their type's age cutoff and beyond its row cap,
 * and rollup rows older than `rollupsAfter` (the request cutoff by default),
 * in bounded deletes of `batchSize` rows (at most `maxBatchesPerCycle` per
 * type), pausing `batchPauseMs` only when another batch follows. A type that
 * `archive` covers is handed to its sink batch by batch, and only what the
 * sink took is deleted. `signal` stops the prune between two batches.
 */
export async function pruneEntries(
  store: ConsoleStore,
  options: ResolvedPrune,
  now = Date.now(),
  signal?: AbortSignal
): Promise<PruneResult> {
  const result: PruneResult = {}
  for (const type of [...ENTRY_TYPES, ...(options.customTypes ?? [])]) {
    if (signal?.aborted) return result
    const belowId = await cutoff(store, options, type, now)
    if (!belowId) continue
    const step = { type, belowId, limit: options.batchSize }
    const archived = options.archive?.types.includes(type) ? options.archive.sink : undefined
    let deleted = 0
    for (let round = 0; round < options.maxBatchesPerCycle; round++) {
      const count = archived
        ? await archiveThenDelete(store, step, archived, deleted)
        : await store.deleteBelow(step)
      deleted += count
      if (count < options.batchSize || round === options.maxBatchesPerCycle - 1) break
      if (signal?.aborted) break
      if (options.batchPauseMs > 0) await sleep(options.batchPauseMs)
    }
    if (deleted > 0) {
      debug('pruned %d %s entries', deleted, type)
      result[type] = deleted
    }
  }
  const rollupAge = options.rollupsAfter ?? options.perType.request ?? options.after
  if (rollupAge !== undefined && !signal?.aborted) {
    const rollups = await deleteRollups(store, options, minuteOf(now - rollupAge))
    if (rollups > 0) result.rollups = rollups
  }
  return result
}

/** One batch of an archived type: the sink gets the entries, then exactly those are deleted */
async function archiveThenDelete(
  store: ConsoleStore,
  step: PruneStep,
  sink: ArchiveSink,
  deletedBefore: number
) {
  const entries = await store.entriesBelow(step)
  if (entries.length === 0) return 0
  try {
    await sink(entries, step.type)
  } catch (error) {
    throw new ConsoleArchiveFailedException(
      // the sink's own message stays in `cause` (logged, never sent to the API's client)
      `archive.sink failed on ${entries.length} ${step.type} entries; they stay stored for the next prune (${deletedBefore} ${step.type} entries were archived and deleted before)`,
      { cause: error }
    )
  }
  return store.deleteEntries(entries.map((entry) => entry.id))
}

/** Rollup rows of minutes before `beforeMinute`, in the same bounded batches as entries */
async function deleteRollups(store: ConsoleStore, options: ResolvedPrune, beforeMinute: number) {
  let deleted = 0
  for (let round = 0; round < options.maxBatchesPerCycle; round++) {
    const count = await store.deleteRollupsBefore(beforeMinute, options.batchSize)
    deleted += count
    if (count < options.batchSize || round === options.maxBatchesPerCycle - 1) break
    if (options.batchPauseMs > 0) await sleep(options.batchPauseMs)
  }
  if (deleted > 0) debug('pruned %d rollup rows', deleted)
  return deleted
}

/** The id below which a type's entries go: the later of its age and row-cap cutoffs */
async function cutoff(store: ConsoleStore, options: ResolvedPrune, type: EntryType, now: number) {
  const bounds: string[] = []
  const age = options.perType[type] ?? options.after
  if (age !== undefined) bounds.push(idAtTime(now - age))
  const keep = options.maxRows[type]
  if (keep !== undefined && keep >= 1) {
    const id = await store.idAfterNewest(type, keep)
    if (id) bounds.push(id)
  }
  return bounds.sort().at(-1)
}
