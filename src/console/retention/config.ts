import { durationMs, entryType, fail, FILE, positiveInteger } from '../config_checks.ts'
import type { ConsoleConfig, PruneOptions, ResolvedPrune } from '../types.ts'
import { ENTRY_TYPES } from '../types.ts'

/**
 * `prune` and `archive` of config/console.ts with their defaults, or a
 * config error naming the key.
 */
export function resolvePrune(
  options: PruneOptions = {},
  archive?: ConsoleConfig['archive']
): ResolvedPrune {
  const perType: ResolvedPrune['perType'] = {}
  for (const [name, value] of Object.entries(options.perType ?? {})) {
    perType[entryType(name, 'prune.perType')] = durationMs(value!, `prune.perType.${name}`)
  }
  const maxRows: ResolvedPrune['maxRows'] = {}
  if (typeof options.maxRows === 'number') {
    for (const type of ENTRY_TYPES) {
      maxRows[type] = positiveInteger(options.maxRows, 'prune.maxRows', 0)
    }
  } else {
    for (const [name, value] of Object.entries(options.maxRows ?? {})) {
      maxRows[entryType(name, 'prune.maxRows')] = positiveInteger(value, `prune.maxRows.${name}`, 0)
    }
  }
  const rules = {
    after: options.after === undefined ? undefined : durationMs(options.after, 'prune.after'),
    perType,
    maxRows,
    rollupsAfter:
      options.rollupsAfter === undefined
        ? undefined
        : durationMs(options.rollupsAfter, 'prune.rollupsAfter'),
  }
  return {
    ...rules,
    batchSize: Math.max(1, positiveInteger(options.batchSize, 'prune.batchSize', 1000)),
    maxBatchesPerCycle: Math.max(
      1,
      positiveInteger(options.maxBatchesPerCycle, 'prune.maxBatchesPerCycle', 50)
    ),
    batchPauseMs: positiveInteger(options.batchPauseMs, 'prune.batchPauseMs', 50),
    ...resolveSchedule(options, hasPruneRules(rules)),
    archive: resolveArchive(archive),
  }
}

/** Whether `prune` sets any rule: an age, a per-type age, a row cap or a rollup age */
export function hasPruneRules(
  prune: Pick<ResolvedPrune, 'after' | 'perType' | 'maxRows' | 'rollupsAfter'>
) {
  return (
    prune.after !== undefined ||
    prune.rollupsAfter !== undefined ||
    Object.keys(prune.perType).length > 0 ||
    Object.keys(prune.maxRows).length > 0
  )
}

const DEFAULT_PRUNE_INTERVAL_MS = 5 * 60_000

/** When each instance prunes by itself, and the lock its prunes take */
function resolveSchedule(options: PruneOptions, hasRules: boolean) {
  if (options.intervalMs !== undefined && options.intervalMs !== false) {
    if (!Number.isSafeInteger(options.intervalMs) || options.intervalMs < 1000) {
      fail(`Invalid "prune.intervalMs" in ${FILE}: use ms of 1000 or more, or false`)
    }
  }
  const intervalMs =
    options.intervalMs === false || !hasRules
      ? undefined
      : (options.intervalMs ?? DEFAULT_PRUNE_INTERVAL_MS)
  const lock: ResolvedPrune['lock'] = options.lock ?? 'storage'
  if (lock !== false && lock !== 'storage' && typeof lock.acquire !== 'function') {
    fail(`Invalid "prune.lock" in ${FILE}: use false or an object with acquire(name, ttlMs)`)
  }
  const lockTtlMs =
    options.lockTtlMs === undefined
      ? Math.max((intervalMs ?? DEFAULT_PRUNE_INTERVAL_MS) * 3, 60_000)
      : Math.max(1, positiveInteger(options.lockTtlMs, 'prune.lockTtlMs', 60_000))
  return { intervalMs, lock, lockTtlMs }
}

function resolveArchive(options: ConsoleConfig['archive']): ResolvedPrune['archive'] {
  if (options === undefined) return undefined
  if (typeof options?.sink !== 'function') {
    fail(`Invalid "archive" in ${FILE}: use { sink: async (entries, type) => { ... } }`)
  }
  const types = (options.types ?? ENTRY_TYPES).map((name) => entryType(name, 'archive.types'))
  return { sink: options.sink, types }
}
