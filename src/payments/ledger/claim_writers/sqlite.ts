import type { ClaimBatchResult, ClaimItem, ClaimWriterContext, MarkItem } from '../claim_writer.ts'
import { withSqliteStatements, type SqliteStatement } from '../../../shared/sqlite_statements.ts'
import { BatchedClaimWriter } from './batched.ts'
import { TABLES } from '../tables.ts'

const CLAIM = `insert into ${TABLES.events} (provider, event_id, type, status, attempts, raw,
    normalized, trace_id, locked_until, created_at, updated_at)
  values (?, ?, ?, 'recorded', 1, ?, ?, ?, ?, ?, ?)
  on conflict (provider, event_id) do nothing`

const PAYMENT = `insert into ${TABLES.payments} (provider, payment_id, status, amount, currency,
    refunded_amount, customer_id, paid_at, external_reference, last_event_at, created_at, updated_at)
  values (?, ?, ?, ?, ?, coalesce(?, (select coalesce(sum(amount), 0) from ${TABLES.refunds}
    where provider = ? and payment_id = ?)), ?, ?, ?, ?, ?, ?)
  on conflict (provider, payment_id) do nothing`

const MARK = `update ${TABLES.events} set status = 'processed', type = ?, error = null,
  processed_at = ?, updated_at = ? where provider = ? and event_id = ?`

/**
 * better-sqlite3: each batch's ledger inserts and first-seen payment
 * inserts run as cached prepared statements in one transaction.
 */
export class SqliteClaimWriter extends BatchedClaimWriter {
  #context: ClaimWriterContext

  constructor(context: ClaimWriterContext) {
    super()
    this.#context = context
  }

  protected runClaims(items: ClaimItem[]) {
    return this.#write((statement) => {
      const claim = statement(CLAIM)
      const pay = statement(PAYMENT)
      return items.map((item): ClaimBatchResult => {
        const at = item.at.valueOf()
        const claimed =
          claim.run(
            item.provider,
            item.eventId,
            item.type,
            item.raw,
            item.normalized,
            item.traceId,
            item.lockedUntil,
            at,
            at
          ).changes > 0
        const payment = item.payment
        if (!claimed || !payment) {
          return { claimed }
        }
        const inserted = pay.run(
          payment.provider,
          payment.payment_id,
          payment.status,
          payment.amount,
          payment.currency,
          payment.refunded_amount,
          payment.provider,
          payment.payment_id,
          payment.customer_id,
          payment.paid_at?.valueOf() ?? null,
          payment.external_reference,
          payment.last_event_at,
          at,
          at
        )
        return { claimed, payment: inserted.changes > 0 ? 'inserted' : 'exists' }
      })
    })
  }

  protected async runMarks(items: MarkItem[]) {
    const now = Date.now()
    await this.#write((statement) => {
      const mark = statement(MARK)
      for (const item of items) {
        mark.run(item.type, now, now, item.provider, item.eventId)
      }
    })
  }

  /** Synchronous better-sqlite3 work in one transaction, with the connection's cached statements */
  #write<T>(work: (statement: (sql: string) => SqliteStatement) => T): Promise<T> {
    const client = this.#context.db.connection(this.#context.connection)
    return withSqliteStatements(client, ({ statement, transaction }) =>
      transaction(() => work(statement))
    )
  }
}
