import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { BillingSync } from './billing/sync.ts'
import { firstSeenPayment } from './billing/payment.ts'
import { createClaimWriter, type ClaimItem, type ClaimWriter } from './ledger/claim_writer.ts'
import { capabilitiesOf } from './ledger/dialect.ts'
import { RejectionRecorder } from './ledger/rejections.ts'
import { checkBillingSchema } from './ledger/schema_check.ts'
import {
  TABLES,
  normalizePayment,
  type ClaimResult,
  type LedgerRow,
  type LedgerStatus,
  type PaymentRow,
  type SyncOutcome,
} from './ledger/tables.ts'
import type { PaymentWebhookData, WebhookEvent } from './types.ts'

export { TABLES }
export type { ClaimResult, LedgerRow, LedgerStatus, PaymentRow, SyncOutcome }

/**
 * The persistence side of the webhook route, on Lucid: the idempotent
 * ledger, billing tables, audit rows and lookups.
 */
export interface WebhookStore {
  /** `rawText`: the delivery's own bytes, stored as is when it carries this one event */
  claim(event: WebhookEvent, traceId: string, rawText?: string): Promise<ClaimResult>
  markProcessed(event: WebhookEvent): Promise<void>
  markFailed(event: WebhookEvent, error: unknown): Promise<void>
  sync(event: WebhookEvent): Promise<SyncOutcome>
  audit(row: { provider: string; type: string; reason: string; traceId?: string }): Promise<void>
  findPaymentByExternalReference(reference: string): Promise<PaymentRow | null>
}

/**
 * The Lucid store behind the route. Exactly-once delivery to handlers rests
 * on the unique `(provider, event_id)` key of the ledger and on conditional
 * updates: only one caller can move a row to `recorded`. The claim writer
 * and the dialect's capabilities are chosen once, here.
 */
export class LucidWebhookStore implements WebhookStore {
  #db: Database
  #connection?: string
  #leaseMs: number
  #writer: ClaimWriter
  #billing: BillingSync
  #rejections: RejectionRecorder
  #schema?: Promise<void>
  /** Events whose claim statement also tried the first-seen payment insert */
  #firstSeen = new WeakMap<WebhookEvent, 'inserted' | 'exists'>()

  constructor(db: Database, options: { connection?: string; processingLeaseMs?: number } = {}) {
    this.#db = db
    this.#connection = options.connection
    this.#leaseMs = options.processingLeaseMs ?? 5 * 60_000
    this.#rejections = new RejectionRecorder(() => this.client)
    const caps = capabilitiesOf(this.client)
    this.#writer = createClaimWriter(caps.claimWriter, { db, connection: this.#connection })
    this.#billing = new BillingSync(() => this.client, caps)
  }

  get client(): QueryClientContract {
    return this.#db.connection(this.#connection)
  }

  /**
   * Checks that the billing tables have every column the published
   * migrations create; throws `E_PAYMENTS_SCHEMA` naming
   * `node ace migration:run` otherwise. Never alters a table. Checked once
   * per store (a failed check runs again on next use).
   */
  ensureSchema(): Promise<void> {
    this.#schema ??= checkBillingSchema(this.client).catch((error) => {
      this.#schema = undefined
      throw error
    })
    return this.#schema
  }

  async claim(event: WebhookEvent, traceId: string, rawText?: string): Promise<ClaimResult> {
    await this.ensureSchema()
    const writer = this.#writer
    const now = Date.now()
    const item: ClaimItem = {
      provider: event.provider,
      eventId: event.id,
      type: event.type,
      raw: rawText ?? JSON.stringify(event.raw ?? null),
      normalized: JSON.stringify({ ...event, raw: undefined }),
      traceId,
      lockedUntil: now + this.#leaseMs,
      at: new Date(now),
    }
    const payment = event as WebhookEvent<PaymentWebhookData>
    if (
      writer.writesPayments &&
      typeof payment.data?.paymentId === 'string' &&
      !payment.data.refunds?.length
    ) {
      item.payment = firstSeenPayment(payment, item.at) ?? undefined
    }
    const result = await writer.claim(item)
    if (result.claimed) {
      if (result.payment) {
        this.#firstSeen.set(event, result.payment)
      }
      return 'claimed'
    }
    return this.#claimExisting(event, traceId, now)
  }

  /**
   * The row exists: processed (skip), held by a live lease (409), or
   * claimable again by one conditional update: the status and attempts
   * it was read with are part of the key, so of many concurrent
   * redeliveries of a failed or expired row exactly one wins.
   */
  async #claimExisting(event: WebhookEvent, traceId: string, now: number): Promise<ClaimResult> {
    const row: LedgerRow | null = await this.client
      .from(TABLES.events)
      .where({ provider: event.provider, event_id: event.id })
      .first()
    if (!row) {
      return 'in_flight'
    }
    if (row.status === 'processed') {
      return 'processed'
    }
    if (row.status === 'recorded' && Number(row.locked_until) > now) {
      return 'in_flight'
    }
    const updated = await this.client
      .from(TABLES.events)
      .where({ id: row.id, status: row.status, attempts: row.attempts })
      .update({
        status: 'recorded',
        attempts: row.attempts + 1,
        locked_until: now + this.#leaseMs,
        trace_id: traceId,
        error: null,
        updated_at: new Date(now),
      })
    return Number(Array.isArray(updated) ? updated[0] : updated) === 1 ? 'claimed' : 'in_flight'
  }

  async markProcessed(event: WebhookEvent) {
    await this.#writer.mark({ provider: event.provider, eventId: event.id, type: event.type })
  }

  async markFailed(event: WebhookEvent, error: unknown) {
    const message = error instanceof Error ? error.message : String(error)
    await this.client
      .from(TABLES.events)
      .where({ provider: event.provider, event_id: event.id })
      .update({ status: 'failed', error: message.slice(0, 2000), updated_at: new Date() })
  }

  async sync(event: WebhookEvent): Promise<SyncOutcome> {
    await this.ensureSchema()
    const firstSeen = this.#firstSeen.get(event)
    this.#firstSeen.delete(event)
    return this.#billing.sync(event, firstSeen)
  }

  /**
   * Records a rejected delivery as a per-minute counter row (see
   * docs/payments.md, "Rejection recording"): a flood of rejections
   * writes a bounded number of rows.
   */
  async audit(row: { provider: string; type: string; reason: string; traceId?: string }) {
    await this.#rejections.record(row)
  }

  async findPaymentByExternalReference(reference: string): Promise<PaymentRow | null> {
    await this.ensureSchema()
    const row = await this.client
      .from(TABLES.payments)
      .where('external_reference', reference)
      .orderBy('id', 'desc')
      .first()
    return row ? normalizePayment(row) : null
  }

  async findPayment(provider: string, paymentId: string): Promise<PaymentRow | null> {
    const row = await this.client
      .from(TABLES.payments)
      .where({ provider, payment_id: paymentId })
      .first()
    return row ? normalizePayment(row) : null
  }

  /**
   * Ledger rows for `payments:webhooks:replay`.
   */
  async listEvents(filter: { status?: LedgerStatus; eventId?: string; provider?: string }) {
    const query = this.client.from(TABLES.events).orderBy('id', 'asc')
    if (filter.status) query.where('status', filter.status)
    if (filter.eventId) query.where('event_id', filter.eventId)
    if (filter.provider) query.where('provider', filter.provider)
    return (await query) as LedgerRow[]
  }

  /**
   * Releases a row so a replay can claim it again.
   */
  async release(provider: string, eventId: string) {
    await this.client
      .from(TABLES.events)
      .where({ provider, event_id: eventId })
      .whereNot('status', 'recorded')
      .update({ status: 'failed', updated_at: new Date() })
  }
}
