import type { Database } from '@adonisjs/lucid/database'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { WriteBatcher } from './batcher.ts'
import debug from './debug.ts'
import { E_DISPUTE_OUTCOME_MISSING } from './errors.ts'
import type {
  DisputeWebhookData,
  PaymentStatus,
  PaymentWebhookData,
  RefundData,
  SubscriptionWebhookData,
  WebhookEvent,
} from './types.ts'

export const TABLES = {
  events: 'billing_webhook_events',
  payments: 'billing_payments',
  subscriptions: 'billing_subscriptions',
  disputes: 'billing_disputes',
  audit: 'billing_audit_events',
  refunds: 'billing_refunds',
} as const

/** Ledger status of an event row */
export type LedgerStatus = 'recorded' | 'processed' | 'failed'

/**
 * `claimed`: this caller runs the event; `processed`: done before, skip;
 * `in_flight`: another delivery holds it right now.
 */
export type ClaimResult = 'claimed' | 'processed' | 'in_flight'

export interface LedgerRow {
  id: number
  provider: string
  event_id: string
  type: string
  status: LedgerStatus
  attempts: number
  raw: string
  normalized: string
  error: string | null
  trace_id: string | null
  locked_until: number | string
}

export interface PaymentRow {
  id: number
  provider: string
  payment_id: string
  status: PaymentStatus
  amount: number
  currency: string | null
  refunded_amount: number
  external_reference?: string | null
  customer_id: string | null
  paid_at: Date | string | null
}

/**
 * What billing sync decided: the event type handlers and subscribers see
 * (a `payment.updated` whose refunds complete the charge becomes `payment.refunded`).
 */
export interface SyncOutcome {
  type: string
}

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

const RANK: Record<PaymentStatus, number> = {
  pending: 0,
  failed: 1,
  paid: 2,
  refunded: 3,
  disputed: 4,
}
const DISPUTE_RANK: Record<string, number> = { warning: 0, open: 1, closed: 2 }

function isUniqueViolation(error: any) {
  return (
    error?.code === '23505' ||
    error?.code === 'ER_DUP_ENTRY' ||
    error?.errno === 1062 ||
    String(error?.code ?? '').startsWith('SQLITE_CONSTRAINT')
  )
}

function toDate(value: string | null | undefined): Date | null {
  if (!value) {
    return null
  }
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? null : date
}

/**
 * The Lucid store behind the route. Exactly-once delivery to handlers rests
 * on the unique `(provider, event_id)` key of the ledger and on conditional
 * updates: only one caller can move a row to `recorded`.
 */
export class LucidWebhookStore implements WebhookStore {
  #db: Database
  #connection?: string
  #leaseMs: number
  #hasExternalReference = true
  /** False until the alteration ran against an existing table */
  #schemaChecked = false
  #dialect?: string
  #claimBatcher?: WriteBatcher<ClaimItem, ClaimBatchResult>
  #markBatcher?: WriteBatcher<MarkItem, void>
  /** Events whose claim statement also tried the first-seen payment insert */
  #firstSeen = new WeakMap<WebhookEvent, 'inserted' | 'exists'>()

  constructor(db: Database, options: { connection?: string; processingLeaseMs?: number } = {}) {
    this.#db = db
    this.#connection = options.connection
    this.#leaseMs = options.processingLeaseMs ?? 5 * 60_000
  }

  get client(): QueryClientContract {
    return this.#db.connection(this.#connection)
  }

  /**
   * §9: adds `billing_payments.external_reference` (and its index) when an
   * install predates it. Runs at boot; does nothing when the column exists
   * or the table has not been migrated yet.
   */
  async ensureSchema() {
    // A knex schema builder runs every statement it collected: one per call
    if (!(await this.client.schema.hasTable(TABLES.payments))) {
      // Not migrated yet (an app migrating after boot): checked again on first use
      this.#hasExternalReference = false
      return false
    }
    this.#schemaChecked = true
    if (await this.client.schema.hasColumn(TABLES.payments, 'external_reference')) {
      this.#hasExternalReference = true
      return false
    }
    try {
      await this.client.schema.alterTable(TABLES.payments, (table) => {
        table
          .string('external_reference', 191)
          .nullable()
          .index('billing_payments_external_reference_index')
      })
      debug('added billing_payments.external_reference')
    } catch (error) {
      // Another instance booting at the same time may have added it first
      if (!(await this.client.schema.hasColumn(TABLES.payments, 'external_reference'))) {
        throw error
      }
    }
    this.#hasExternalReference = true
    return true
  }

  async claim(event: WebhookEvent, traceId: string, rawText?: string): Promise<ClaimResult> {
    const now = Date.now()
    if (this.#grouped()) {
      if (!this.#schemaChecked) {
        await this.ensureSchema()
      }
      const item = this.#claimItem(event, traceId, rawText, now)
      const result = await this.#claims().add(item)
      if (result.claimed) {
        if (result.payment) {
          this.#firstSeen.set(event, result.payment)
        }
        return 'claimed'
      }
      return this.#claimExisting(event, traceId, now)
    }
    try {
      await this.client.table(TABLES.events).insert({
        provider: event.provider,
        event_id: event.id,
        type: event.type,
        status: 'recorded',
        attempts: 1,
        raw: rawText ?? JSON.stringify(event.raw ?? null),
        normalized: JSON.stringify({ ...event, raw: undefined }),
        trace_id: traceId,
        locked_until: now + this.#leaseMs,
        created_at: new Date(now),
        updated_at: new Date(now),
      })
      return 'claimed'
    } catch (error) {
      if (!isUniqueViolation(error)) {
        throw error
      }
    }
    return this.#claimExisting(event, traceId, now)
  }

  /**
   * The row exists: processed (skip), held by a live lease (409), or
   * claimable again by one conditional update.
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
    // A failed row, or one whose processing lease ran out: claimable once
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
    if (this.#grouped()) {
      await this.#marks().add({ provider: event.provider, eventId: event.id, type: event.type })
      return
    }
    await this.client
      .from(TABLES.events)
      .where({ provider: event.provider, event_id: event.id })
      .update({
        status: 'processed',
        type: event.type,
        error: null,
        processed_at: new Date(),
        updated_at: new Date(),
      })
  }

  /**
   * Claims and marks go through the write batchers on PostgreSQL and
   * better-sqlite3; other dialects (MySQL) run one statement per call.
   */
  #grouped() {
    this.#dialect ??= this.client.dialect.name
    return this.#dialect === 'postgres' || this.#dialect === 'better-sqlite3'
  }

  #claims() {
    this.#claimBatcher ??= new WriteBatcher<ClaimItem, ClaimBatchResult>({
      key: (item) => `${item.provider}\0${item.eventId}`,
      // A second delivery of an event in the same batch loses the insert race
      duplicate: () => ({ claimed: false }),
      run: (items) => this.#runClaims(items),
    })
    return this.#claimBatcher
  }

  #marks() {
    this.#markBatcher ??= new WriteBatcher<MarkItem, void>({
      key: (item) => `${item.provider}\0${item.eventId}`,
      run: (items) => this.#runMarks(items),
    })
    return this.#markBatcher
  }

  /**
   * One ledger row to insert; for a payment event with no refunds, also
   * the payment row to insert when the payment is seen for the first time.
   */
  #claimItem(event: WebhookEvent, traceId: string, rawText: string | undefined, now: number) {
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
    const data = event.data as PaymentWebhookData | undefined
    if (
      (event.type === 'payment.succeeded' ||
        event.type === 'payment.failed' ||
        event.type === 'payment.refunded') &&
      typeof data?.paymentId === 'string' &&
      !data.refunds?.length
    ) {
      const status = newPaymentStatus(event.type)
      const amount = data.amount ?? 0
      item.payment = {
        paymentId: data.paymentId,
        status,
        amount,
        currency: data.currency ?? null,
        refundedAmount: status === 'refunded' ? (data.refundedAmount ?? amount) : null,
        customerId: data.customerId ?? null,
        paidAt:
          status === 'paid' ? (toDate(data.paidAt) ?? toDate(event.occurredAt) ?? item.at) : null,
        externalReference: data.externalReference ?? null,
      }
    }
    return item
  }

  /**
   * Group commit of claims: the batch's ledger rows and, for the rows it
   * inserted, the payment rows of first-seen payments commit together,
   * before any handler runs.
   */
  async #runClaims(items: ClaimItem[]): Promise<ClaimBatchResult[]> {
    try {
      return await this.#claimStatement(items)
    } catch (error) {
      if (items.length > 1 || !items[0].payment) {
        throw error
      }
      // A payment row the database refuses must not cost the ledger row: record
      // the claim alone, and sync then fails (and marks) the event as before
      return this.#claimStatement([{ ...items[0], payment: undefined }])
    }
  }

  /**
   * On PostgreSQL, one autocommit statement: a data-modifying CTE over the
   * batch's arrays, rows inserted in key order so concurrent batches take
   * their locks in one order.
   */
  async #claimStatement(items: ClaimItem[]): Promise<ClaimBatchResult[]> {
    if (this.#dialect === 'better-sqlite3') {
      return this.#sqliteClaims(items)
    }
    const columns: unknown[][] = Array.from({ length: 16 }, () => [])
    for (const item of items) {
      const payment = item.payment
      const values = [
        item.provider,
        item.eventId,
        item.type,
        item.raw,
        item.normalized,
        item.traceId,
        item.lockedUntil,
        item.at,
        payment?.paymentId ?? null,
        payment?.status ?? null,
        payment?.amount ?? null,
        payment?.currency ?? null,
        payment?.refundedAmount ?? null,
        payment?.customerId ?? null,
        payment?.paidAt ?? null,
        payment?.externalReference ?? null,
      ]
      values.forEach((value, index) => columns[index].push(value))
    }
    const reference = this.#hasExternalReference
    const result = await this.#pgQuery(
      reference ? 'atrium_payments_claim_ref' : 'atrium_payments_claim',
      `with v as (
        select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
          $7::bigint[], $8::timestamptz[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::bigint[],
          $14::text[], $15::timestamptz[], $16::text[])
        as v(provider, event_id, type, raw, normalized, trace_id, locked_until, at, payment_id,
          status, amount, currency, refunded_amount, customer_id, paid_at, external_reference)
      ),
      c as (
        insert into ${TABLES.events} (provider, event_id, type, status, attempts, raw, normalized,
          trace_id, locked_until, created_at, updated_at)
        select provider, event_id, type, 'recorded', 1, raw, normalized, trace_id, locked_until, at, at
        from v order by provider, event_id
        on conflict (provider, event_id) do nothing
        returning provider, event_id
      ),
      p as (
        insert into ${TABLES.payments} (provider, payment_id, status, amount, currency,
          refunded_amount, customer_id, paid_at, ${reference ? 'external_reference, ' : ''}created_at, updated_at)
        select v.provider, v.payment_id, v.status, v.amount, v.currency,
          coalesce(v.refunded_amount, (select coalesce(sum(r.amount), 0) from ${TABLES.refunds} r
            where r.provider = v.provider and r.payment_id = v.payment_id)),
          v.customer_id, v.paid_at, ${reference ? 'v.external_reference, ' : ''}v.at, v.at
        from v join c on c.provider = v.provider and c.event_id = v.event_id
        where v.payment_id is not null
        order by v.provider, v.payment_id
        on conflict (provider, payment_id) do nothing
        returning provider, payment_id
      )
      select 'e' as kind, provider, event_id as key from c
      union all select 'p', provider, payment_id from p`,
      columns
    )
    const claimed = new Set<string>()
    const inserted = new Set<string>()
    for (const row of result.rows as { kind: string; provider: string; key: string }[]) {
      ;(row.kind === 'e' ? claimed : inserted).add(`${row.provider}\0${row.key}`)
    }
    return items.map((item) => {
      const isClaimed = claimed.has(`${item.provider}\0${item.eventId}`)
      return {
        claimed: isClaimed,
        payment:
          isClaimed && item.payment
            ? inserted.has(`${item.provider}\0${item.payment.paymentId}`)
              ? 'inserted'
              : 'exists'
            : undefined,
      }
    })
  }

  /**
   * SQLite group commit of claims: the batch's ledger inserts and first-seen
   * payment inserts run as prepared statements in one transaction.
   */
  #sqliteClaims(items: ClaimItem[]) {
    const reference = this.#hasExternalReference
    return this.#sqliteWrite((statement) => {
      const claim = statement(
        `insert into ${TABLES.events} (provider, event_id, type, status, attempts, raw, normalized,
          trace_id, locked_until, created_at, updated_at)
        values (?, ?, ?, 'recorded', 1, ?, ?, ?, ?, ?, ?)
        on conflict (provider, event_id) do nothing`
      )
      const pay = statement(
        `insert into ${TABLES.payments} (provider, payment_id, status, amount, currency,
          refunded_amount, customer_id, paid_at, ${reference ? 'external_reference, ' : ''}created_at, updated_at)
        values (?, ?, ?, ?, ?, coalesce(?, (select coalesce(sum(amount), 0) from ${TABLES.refunds}
          where provider = ? and payment_id = ?)), ?, ?, ${reference ? '?, ' : ''}?, ?)
        on conflict (provider, payment_id) do nothing`
      )
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
          item.provider,
          payment.paymentId,
          payment.status,
          payment.amount,
          payment.currency,
          payment.refundedAmount,
          item.provider,
          payment.paymentId,
          payment.customerId,
          payment.paidAt?.valueOf() ?? null,
          ...(reference ? [payment.externalReference] : []),
          at,
          at
        )
        return { claimed, payment: inserted.changes > 0 ? 'inserted' : 'exists' }
      })
    })
  }

  /**
   * Runs synchronous better-sqlite3 work in one transaction on the pooled
   * connection (waiting for it like any query); prepared statements are
   * cached per connection.
   */
  async #sqliteWrite<T>(work: (statement: (sql: string) => SqliteStatement) => T): Promise<T> {
    const knex = this.client.getWriteClient().client
    const connection = await knex.acquireConnection()
    try {
      let cache = SQLITE_STATEMENTS.get(connection)
      if (!cache) {
        cache = new Map()
        SQLITE_STATEMENTS.set(connection, cache)
      }
      const statement = (sql: string) => {
        let prepared = cache!.get(sql)
        if (!prepared) {
          prepared = connection.prepare(sql) as SqliteStatement
          cache!.set(sql, prepared)
        }
        return prepared
      }
      return connection.transaction(() => work(statement))()
    } finally {
      await knex.releaseConnection(connection)
    }
  }

  /**
   * Runs a named prepared statement on a pooled connection of the write
   * client: PostgreSQL parses and plans the hot statements once per
   * connection, and the query builder is skipped. Autocommit, like any
   * statement outside a transaction.
   */
  async #pgQuery(name: string, text: string, values: unknown[]) {
    const knex = this.client.getWriteClient().client
    const connection = await knex.acquireConnection()
    try {
      return (await connection.query({ name, text, values })) as { rows: any[] }
    } finally {
      await knex.releaseConnection(connection)
    }
  }

  /**
   * PostgreSQL group commit of `processed` marks: one update for the batch.
   */
  async #runMarks(items: MarkItem[]) {
    const now = new Date()
    if (this.#dialect === 'better-sqlite3') {
      return this.#sqliteWrite((statement) => {
        const mark = statement(
          `update ${TABLES.events} set status = 'processed', type = ?, error = null,
            processed_at = ?, updated_at = ? where provider = ? and event_id = ?`
        )
        for (const item of items) {
          mark.run(item.type, now.valueOf(), now.valueOf(), item.provider, item.eventId)
        }
        return items.map(() => undefined)
      })
    }
    await this.#pgQuery(
      'atrium_payments_mark',
      `update ${TABLES.events} as e
        set status = 'processed', type = v.type, error = null, processed_at = $1, updated_at = $1
        from unnest($2::text[], $3::text[], $4::text[]) as v(provider, event_id, type)
        where e.provider = v.provider and e.event_id = v.event_id`,
      [
        now,
        items.map((item) => item.provider),
        items.map((item) => item.eventId),
        items.map((item) => item.type),
      ]
    )
    return items.map(() => undefined)
  }

  async markFailed(event: WebhookEvent, error: unknown) {
    const message = error instanceof Error ? error.message : String(error)
    await this.client
      .from(TABLES.events)
      .where({ provider: event.provider, event_id: event.id })
      .update({ status: 'failed', error: message.slice(0, 2000), updated_at: new Date() })
  }

  async audit(row: { provider: string; type: string; reason: string; traceId?: string }) {
    await this.client.table(TABLES.audit).insert({
      provider: row.provider.slice(0, 100),
      type: row.type,
      reason: row.reason.slice(0, 1000),
      trace_id: row.traceId ?? null,
      created_at: new Date(),
    })
  }

  async findPaymentByExternalReference(reference: string): Promise<PaymentRow | null> {
    if (!this.#schemaChecked) {
      await this.ensureSchema()
    }
    if (!this.#hasExternalReference) {
      return null
    }
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

  async sync(event: WebhookEvent): Promise<SyncOutcome> {
    if (!this.#schemaChecked) {
      await this.ensureSchema()
    }
    if (event.type === 'payment.dispute_closed' && !(event.data as DisputeWebhookData)?.outcome) {
      throw new E_DISPUTE_OUTCOME_MISSING([event.id])
    }
    switch (event.type) {
      case 'payment.succeeded':
      case 'payment.failed':
      case 'payment.refunded':
      case 'payment.updated': {
        const payment = event as WebhookEvent<PaymentWebhookData>
        const firstSeen = this.#firstSeen.get(event)
        if (firstSeen) {
          // The claim statement already tried the insert of a first-seen payment
          this.#firstSeen.delete(event)
          if (firstSeen === 'inserted') {
            return { type: event.type }
          }
        } else if (event.type !== 'payment.updated' && !payment.data.refunds?.length) {
          // The common case, a payment seen for the first time: one statement
          if (await this.#insertNewPayment(payment)) {
            return { type: event.type }
          }
        }
        return this.client.transaction((trx) => this.#syncPayment(trx, payment))
      }
      case 'payment.dispute_warning':
      case 'payment.disputed':
      case 'payment.dispute_closed':
        return this.client.transaction((trx) =>
          this.#syncDispute(trx, event as WebhookEvent<DisputeWebhookData>)
        )
      case 'subscription.created':
      case 'subscription.updated':
      case 'subscription.canceled':
        return this.client.transaction((trx) =>
          this.#syncSubscription(trx, event as WebhookEvent<SubscriptionWebhookData>)
        )
      default:
        return { type: event.type }
    }
  }

  #lock(trx: TransactionClientContract, table: string, where: Record<string, unknown>) {
    const query = trx.from(table).where(where)
    if (!this.#isSqlite(trx)) {
      query.forUpdate()
    }
    return query.first()
  }

  async #recordRefunds(
    trx: TransactionClientContract,
    provider: string,
    paymentId: string,
    refunds: RefundData[] | undefined,
    currency: string | undefined
  ) {
    for (const refund of refunds ?? []) {
      const now = new Date()
      await trx
        .table(TABLES.refunds)
        .insert({
          provider,
          refund_id: refund.id,
          payment_id: paymentId,
          amount: refund.amount,
          currency: currency ?? null,
          created_at: now,
          updated_at: now,
        })
        .onConflict(['provider', 'refund_id'])
        .merge(['amount', 'updated_at'])
    }
    return this.#refundTotal(trx, provider, paymentId)
  }

  /**
   * Sums a payment's refunds with a locking read where the dialect has one,
   * so a transaction that waited on the payment row sees the refunds
   * committed meanwhile (MySQL's repeatable read would not otherwise).
   */
  async #refundTotal(trx: TransactionClientContract, provider: string, paymentId: string) {
    const query = trx
      .from(TABLES.refunds)
      .where({ provider, payment_id: paymentId })
      .select('amount')
    if (!this.#isSqlite(trx)) {
      query.forUpdate()
    }
    const rows: { amount: number | string }[] = await query
    return rows.reduce((total, row) => total + Number(row.amount), 0)
  }

  #isSqlite(trx: TransactionClientContract) {
    return trx.dialect.name === 'better-sqlite3' || trx.dialect.name === 'sqlite3'
  }

  /**
   * Inserts the payment row when absent, as one atomic statement; false when
   * a row exists (the caller then runs the locking path). Refunds recorded
   * before the payment (out of order) are summed in the same statement.
   */
  async #insertNewPayment(event: WebhookEvent<PaymentWebhookData>): Promise<boolean> {
    const data = event.data
    const now = new Date()
    const status = newPaymentStatus(event.type)
    const amount = data.amount ?? 0
    const sqlite =
      this.client.dialect.name === 'better-sqlite3' || this.client.dialect.name === 'sqlite3'
    if (sqlite) {
      // SQLite reports an ignored insert only through changes() on the same connection
      return this.client.transaction(async (trx) => {
        await this.#newPaymentQuery(trx, event, status, amount, now)
        const [{ count }] = await trx.rawQuery('select changes() as count')
        return Number(count) > 0
      })
    }
    const query = this.#newPaymentQuery(this.client, event, status, amount, now)
    if (this.client.dialect.name === 'mysql') {
      const [insertId] = (await query) as unknown as number[]
      return Number(insertId) > 0
    }
    const inserted = (await query.returning('id')) as unknown[]
    return inserted.length > 0
  }

  #newPaymentQuery(
    client: QueryClientContract,
    event: WebhookEvent<PaymentWebhookData>,
    status: PaymentStatus,
    amount: number,
    now: Date
  ) {
    const data = event.data
    const refundsSoFar = client.raw(
      `(select coalesce(sum(amount), 0) from ${TABLES.refunds} where provider = ? and payment_id = ?)`,
      [event.provider, data.paymentId]
    )
    return client
      .table(TABLES.payments)
      .insert(this.#newPaymentRow(event, status, amount, refundsSoFar, now))
      .onConflict(['provider', 'payment_id'])
      .ignore()
  }

  /**
   * The row of a payment seen for the first time; a whole refund counts the
   * whole charge, otherwise the refunds recorded before it (out of order).
   */
  #newPaymentRow(
    event: WebhookEvent<PaymentWebhookData>,
    status: PaymentStatus,
    amount: number,
    priorRefunds: unknown,
    now: Date
  ) {
    const data = event.data
    return {
      provider: event.provider,
      payment_id: data.paymentId,
      status,
      amount,
      currency: data.currency ?? null,
      refunded_amount: status === 'refunded' ? (data.refundedAmount ?? amount) : priorRefunds,
      customer_id: data.customerId ?? null,
      paid_at: status === 'paid' ? (toDate(data.paidAt) ?? toDate(event.occurredAt) ?? now) : null,
      ...(this.#hasExternalReference ? { external_reference: data.externalReference ?? null } : {}),
      created_at: now,
      updated_at: now,
    }
  }

  async #syncPayment(
    trx: TransactionClientContract,
    event: WebhookEvent<PaymentWebhookData>
  ): Promise<SyncOutcome> {
    const data = event.data
    const provider = event.provider
    const now = new Date()
    // Lock the payment first: refunds of one payment then sum one after another
    let row: PaymentRow | null = await this.#lock(trx, TABLES.payments, {
      provider,
      payment_id: data.paymentId,
    })
    const refundsTotal = data.refunds?.length
      ? await this.#recordRefunds(trx, provider, data.paymentId, data.refunds, data.currency)
      : undefined

    if (!row) {
      if (event.type === 'payment.updated') {
        return { type: event.type }
      }
      const status = newPaymentStatus(event.type)
      const priorRefunds = refundsTotal ?? (await this.#refundTotal(trx, provider, data.paymentId))
      await trx
        .table(TABLES.payments)
        .insert(this.#newPaymentRow(event, status, data.amount ?? 0, priorRefunds, now))
        .onConflict(['provider', 'payment_id'])
        .ignore()
      row = await this.#lock(trx, TABLES.payments, { provider, payment_id: data.paymentId })
      if (row && row.status === status) {
        return { type: event.type }
      }
    }
    if (!row) {
      return { type: event.type }
    }

    const current = row.status
    const amount = data.amount ?? Number(row.amount)
    const changes: Record<string, unknown> = { updated_at: now }
    let next: PaymentStatus = current
    let type = event.type

    if (data.amount !== undefined && Number(row.amount) === 0) changes.amount = data.amount
    if (data.currency && !row.currency) changes.currency = data.currency
    if (data.customerId && !row.customer_id) changes.customer_id = data.customerId
    if (this.#hasExternalReference && data.externalReference && !row.external_reference) {
      changes.external_reference = data.externalReference
    }

    switch (event.type) {
      case 'payment.succeeded':
        // A late success never undoes a later refund or dispute
        if (RANK[current] <= RANK.paid) {
          next = 'paid'
          if (!row.paid_at) changes.paid_at = toDate(data.paidAt) ?? toDate(event.occurredAt) ?? now
        }
        break
      case 'payment.failed':
        if (current === 'pending') next = 'failed'
        break
      case 'payment.refunded':
        next = 'refunded'
        changes.refunded_amount = data.refundedAmount ?? amount
        break
      case 'payment.updated':
        if (current !== 'disputed') {
          if (data.status && RANK[data.status] >= RANK[current]) next = data.status
        }
        break
    }

    if (refundsTotal !== undefined) {
      changes.refunded_amount = refundsTotal
    } else if (data.refundedAmount !== undefined && event.type === 'payment.updated') {
      changes.refunded_amount = data.refundedAmount
    }
    const refunded = Number(changes.refunded_amount ?? row.refunded_amount)
    if (
      event.type === 'payment.updated' &&
      current !== 'disputed' &&
      amount > 0 &&
      refunded >= amount
    ) {
      next = 'refunded'
      type = 'payment.refunded'
    }
    changes.status = next
    await trx.from(TABLES.payments).where('id', row.id).update(changes)
    debug('payment %s/%s: %s -> %s on %s', provider, data.paymentId, current, next, event.type)
    return { type }
  }

  async #syncDispute(
    trx: TransactionClientContract,
    event: WebhookEvent<DisputeWebhookData>
  ): Promise<SyncOutcome> {
    const data = event.data
    const provider = event.provider
    const now = new Date()
    const status =
      event.type === 'payment.dispute_warning'
        ? 'warning'
        : event.type === 'payment.disputed'
          ? 'open'
          : 'closed'
    const existing = await this.#lock(trx, TABLES.disputes, {
      provider,
      dispute_id: data.disputeId,
    })
    const fields = {
      payment_id: data.paymentId,
      amount: data.amount ?? null,
      currency: data.currency ?? null,
      reason: data.reason ?? null,
      actionable_until: toDate(data.actionableUntil),
    }
    if (!existing) {
      await trx.table(TABLES.disputes).insert({
        provider,
        dispute_id: data.disputeId,
        ...fields,
        status,
        outcome: data.outcome ?? null,
        created_at: now,
        updated_at: now,
      })
    } else if (DISPUTE_RANK[status] >= DISPUTE_RANK[existing.status]) {
      await trx
        .from(TABLES.disputes)
        .where('id', existing.id)
        .update({
          ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null)),
          status,
          outcome: data.outcome ?? existing.outcome ?? null,
          updated_at: now,
        })
    }

    const payment: PaymentRow | null = await this.#lock(trx, TABLES.payments, {
      provider,
      payment_id: data.paymentId,
    })
    if (!payment) {
      return { type: event.type }
    }
    let next = payment.status
    if (event.type === 'payment.disputed') {
      next = 'disputed'
    } else if (event.type === 'payment.dispute_closed') {
      if (payment.status === 'disputed' && data.outcome === 'won') next = 'paid'
    }
    if (next !== payment.status) {
      await trx
        .from(TABLES.payments)
        .where('id', payment.id)
        .update({ status: next, updated_at: now })
    }
    return { type: event.type }
  }

  async #syncSubscription(
    trx: TransactionClientContract,
    event: WebhookEvent<SubscriptionWebhookData>
  ): Promise<SyncOutcome> {
    const data = event.data
    const provider = event.provider
    const now = new Date()
    const existing = await this.#lock(trx, TABLES.subscriptions, {
      provider,
      subscription_id: data.subscriptionId,
    })
    const status =
      event.type === 'subscription.canceled'
        ? 'canceled'
        : (data.status ?? (existing?.status || 'active'))
    const fields = {
      customer_id: data.customerId ?? null,
      plan_id: data.planId ?? null,
      current_period_end: toDate(data.currentPeriodEnd),
      canceled_at:
        event.type === 'subscription.canceled'
          ? (toDate(data.canceledAt) ?? toDate(event.occurredAt) ?? now)
          : null,
      external_reference: data.externalReference ?? null,
    }
    if (!existing) {
      await trx.table(TABLES.subscriptions).insert({
        provider,
        subscription_id: data.subscriptionId,
        status,
        ...fields,
        created_at: now,
        updated_at: now,
      })
      return { type: event.type }
    }
    // Canceled is final: a late update never revives a subscription
    if (existing.status === 'canceled') {
      return { type: event.type }
    }
    await trx
      .from(TABLES.subscriptions)
      .where('id', existing.id)
      .update({
        ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null)),
        status: event.type === 'subscription.created' ? existing.status : status,
        updated_at: now,
      })
    return { type: event.type }
  }
}

interface SqliteStatement {
  run(...values: unknown[]): { changes: number }
}

/** better-sqlite3 prepared statements, per connection */
const SQLITE_STATEMENTS = new WeakMap<object, Map<string, SqliteStatement>>()

interface ClaimItem {
  provider: string
  eventId: string
  type: string
  raw: string
  normalized: string
  traceId: string
  lockedUntil: number
  at: Date
  payment?: {
    paymentId: string
    status: PaymentStatus
    amount: number
    currency: string | null
    /** Null: the sum of refunds recorded before the payment */
    refundedAmount: number | null
    customerId: string | null
    paidAt: Date | null
    externalReference: string | null
  }
}

interface ClaimBatchResult {
  claimed: boolean
  /** Set when the statement tried the first-seen payment insert */
  payment?: 'inserted' | 'exists'
}

interface MarkItem {
  provider: string
  eventId: string
  type: string
}

function newPaymentStatus(type: string): PaymentStatus {
  return type === 'payment.succeeded' ? 'paid' : type === 'payment.failed' ? 'failed' : 'refunded'
}

function normalizePayment(row: any): PaymentRow {
  return {
    ...row,
    amount: Number(row.amount),
    refunded_amount: Number(row.refunded_amount),
  }
}
