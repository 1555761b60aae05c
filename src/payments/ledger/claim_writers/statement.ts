import type {
  ClaimBatchResult,
  ClaimItem,
  ClaimWriter,
  ClaimWriterContext,
  MarkItem,
} from '../claim_writer.ts'
import { isUniqueViolation } from '../dialect.ts'
import { TABLES } from '../tables.ts'

/**
 * One statement per call (MySQL and MariaDB, SQLite without better-sqlite3):
 * the ledger row's unique key decides the claim; billing sync writes the
 * payment row.
 */
export class StatementClaimWriter implements ClaimWriter {
  readonly writesPayments = false
  #context: ClaimWriterContext

  constructor(context: ClaimWriterContext) {
    this.#context = context
  }

  get #client() {
    return this.#context.db.connection(this.#context.connection)
  }

  async claim(item: ClaimItem): Promise<ClaimBatchResult> {
    try {
      await this.#client.table(TABLES.events).insert({
        provider: item.provider,
        event_id: item.eventId,
        type: item.type,
        status: 'recorded',
        attempts: 1,
        raw: item.raw,
        normalized: item.normalized,
        trace_id: item.traceId,
        locked_until: item.lockedUntil,
        created_at: item.at,
        updated_at: item.at,
      })
      return { claimed: true }
    } catch (error) {
      if (!isUniqueViolation(error)) {
        throw error
      }
      return { claimed: false }
    }
  }

  async mark(item: MarkItem) {
    const now = new Date()
    await this.#client
      .from(TABLES.events)
      .where({ provider: item.provider, event_id: item.eventId })
      .update({
        status: 'processed',
        type: item.type,
        error: null,
        processed_at: now,
        updated_at: now,
      })
  }
}
