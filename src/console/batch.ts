import { AsyncLocalStorage } from 'node:async_hooks'
import type { ConsoleEntry } from './types.ts'
import type { TraceIds } from './trace_context.ts'

/**
 * Everything one request (or one unit of work) records: entries wait here
 * until the request ends, so the batch is kept or sampled out as a whole.
 */
export class RecordingBatch {
  /** Entries of this batch beyond `buffer.maxEntriesPerBatch` that were dropped */
  dropped = 0
  /** An exception was recorded: the batch is always kept */
  failing = false
  /** The request's trace (`traceContext`), stamped on every entry when the batch is kept */
  trace: TraceIds | null = null
  readonly entries: ConsoleEntry[] = []

  constructor(
    readonly id: string,
    /** Console's own work (its API, its flushes): nothing inside is recorded */
    readonly ignored = false
  ) {}
}

/** The batch of the code running now, through async calls */
export const batchStorage = new AsyncLocalStorage<RecordingBatch>()

/** The batch the console's own work runs in, so its queries are never recorded */
export const IGNORED_BATCH = new RecordingBatch('ignored', true)
