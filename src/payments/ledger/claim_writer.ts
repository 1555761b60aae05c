import type { Database } from '@adonisjs/lucid/database'
import type { NewPayment } from '../billing/payment.ts'
import { PostgresClaimWriter } from './claim_writers/postgres.ts'
import { SqliteClaimWriter } from './claim_writers/sqlite.ts'
import { StatementClaimWriter } from './claim_writers/statement.ts'

/** One ledger row to insert, and the first-seen payment row riding with it */
export interface ClaimItem {
  provider: string
  eventId: string
  type: string
  raw: string
  normalized: string
  traceId: string
  lockedUntil: number
  at: Date
  payment?: NewPayment
}

export interface ClaimBatchResult {
  claimed: boolean
  /** Set when the statement tried the first-seen payment insert */
  payment?: 'inserted' | 'exists'
}

export interface MarkItem {
  provider: string
  eventId: string
  type: string
}

/**
 * The ledger's hot path on one database: insert a new event row (and, where
 * the writer can, the first-seen payment row in the same commit) and mark
 * rows processed. One writer per dialect, chosen once by the store.
 */
export interface ClaimWriter {
  /** True when `claim` also writes `item.payment` */
  readonly writesPayments: boolean
  /** `claimed: false`: the row exists (the caller then reads it) */
  claim(item: ClaimItem): Promise<ClaimBatchResult>
  mark(item: MarkItem): Promise<void>
}

/** What a writer needs from the store */
export interface ClaimWriterContext {
  db: Database
  connection?: string
}

/** The writer for the dialect's capabilities, chosen once by the store */
export function createClaimWriter(
  kind: 'postgres' | 'sqlite' | 'statement',
  context: ClaimWriterContext
): ClaimWriter {
  if (kind === 'postgres') return new PostgresClaimWriter(context)
  if (kind === 'sqlite') return new SqliteClaimWriter(context)
  return new StatementClaimWriter(context)
}
