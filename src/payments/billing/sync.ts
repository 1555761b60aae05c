import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import debug from '../debug.ts'
import { E_DISPUTE_OUTCOME_MISSING } from '../errors.ts'
import type { DialectCapabilities } from '../ledger/dialect.ts'
import { withRetry } from '../ledger/dialect.ts'
import { TABLES, type PaymentRow, type SyncOutcome } from '../ledger/tables.ts'
import type {
  DisputeWebhookData,
  PaymentWebhookData,
  RefundData,
  SubscriptionWebhookData,
  WebhookEvent,
} from '../types.ts'
import { firstDispute, nextDispute, paymentAfterDispute } from './dispute.ts'
import { createsPayment, firstSeenPayment, nextPayment, type NewPayment } from './payment.ts'
import { firstSubscription, nextSubscription } from './subscription.ts'

type Client = QueryClientContract | TransactionClientContract

/**
 * Billing sync: writes what the state machines decide. Every path that may
 * create a row inserts it first (`on conflict do nothing`) and only then
 * locks it, so two first deliveries of one object queue on the row instead
 * of colliding; each transaction runs again after a deadlock or
 * serialization failure, a bounded number of times.
 */
export class BillingSync {
  #client: () => QueryClientContract
  #caps: DialectCapabilities

  constructor(client: () => QueryClientContract, caps: DialectCapabilities) {
    this.#client = client
    this.#caps = caps
  }

  /** Syncs one event; `firstSeen` is what the claim statement did with the payment row */
  async sync(event: WebhookEvent, firstSeen?: 'inserted' | 'exists'): Promise<SyncOutcome> {
    if (event.type === 'payment.dispute_closed' && !(event.data as DisputeWebhookData)?.outcome) {
      throw new E_DISPUTE_OUTCOME_MISSING([event.id])
    }
    switch (event.type) {
      case 'payment.succeeded':
      case 'payment.failed':
      case 'payment.refunded':
      case 'payment.updated': {
        const payment = event as WebhookEvent<PaymentWebhookData>
        if (firstSeen === 'inserted') {
          return { type: event.type }
        }
        if (!firstSeen && createsPayment(event.type) && !payment.data.refunds?.length) {
          // The common case, a payment seen for the first time: one autocommit statement
          const inserted = await withRetry('payment insert', () =>
            this.#insertPayment(this.#client(), firstSeenPayment(payment, new Date())!)
          )
          if (inserted) return { type: event.type }
        }
        return this.#transaction('payment', (trx) => this.#syncPayment(trx, payment))
      }
      case 'payment.dispute_warning':
      case 'payment.disputed':
      case 'payment.dispute_closed':
        return this.#transaction('dispute', (trx) =>
          this.#syncDispute(trx, event as WebhookEvent<DisputeWebhookData>)
        )
      case 'subscription.created':
      case 'subscription.updated':
      case 'subscription.canceled':
        return this.#transaction('subscription', (trx) =>
          this.#syncSubscription(trx, event as WebhookEvent<SubscriptionWebhookData>)
        )
      default:
        return { type: event.type }
    }
  }

  #transaction<T>(label: string, work: (trx: TransactionClientContract) => Promise<T>) {
    return withRetry(label, () => this.#client().transaction(work))
  }

  /** Reads a row with a row lock where the database has them */
  #lock(trx: Client, table: string, where: Record<string, unknown>) {
    const query = trx.from(table).where(where)
    if (this.#caps.supportsRowLocks) {
      query.forUpdate()
    }
    return query.first()
  }

  /**
   * `insert ... on conflict do nothing`; true when this statement inserted
   * the row. `row` is written as given, so the caller's state machine alone
   * decides its columns.
   */
  async #insertIgnore(client: Client, table: string, unique: string[], row: object) {
    const query = client.table(table).insert(row).onConflict(unique).ignore()
    if (this.#caps.supportsReturning) {
      return ((await query.returning('id')) as unknown[]).length > 0
    }
    if (this.#caps.reportsChangesPerConnection) {
      // Only on the connection that ran the insert: a transaction pins it
      const run = async (trx: Client) => {
        await trx.table(table).insert(row).onConflict(unique).ignore()
        const [{ count }] = await trx.rawQuery('select changes() as count')
        return Number(count) > 0
      }
      return client.isTransaction
        ? run(client)
        : (client as QueryClientContract).transaction((trx) => run(trx))
    }
    const [insertId] = (await query) as unknown as number[]
    return Number(insertId) > 0
  }

  /**
   * Inserts a first-seen payment when absent. Refunds recorded before the
   * payment (out of order) are summed in the same statement.
   */
  #insertPayment(client: Client, payment: NewPayment) {
    const now = new Date()
    const priorRefunds = client.raw(
      `(select coalesce(sum(amount), 0) from ${TABLES.refunds} where provider = ? and payment_id = ?)`,
      [payment.provider, payment.payment_id]
    )
    return this.#insertIgnore(client, TABLES.payments, ['provider', 'payment_id'], {
      ...payment,
      refunded_amount: payment.refunded_amount ?? priorRefunds,
      created_at: now,
      updated_at: now,
    })
  }

  async #recordRefunds(trx: Client, provider: string, data: PaymentWebhookData) {
    for (const refund of data.refunds as RefundData[]) {
      const now = new Date()
      await trx
        .table(TABLES.refunds)
        .insert({
          provider,
          refund_id: refund.id,
          payment_id: data.paymentId,
          amount: refund.amount,
          currency: data.currency ?? null,
          created_at: now,
          updated_at: now,
        })
        .onConflict(['provider', 'refund_id'])
        .merge(['amount', 'updated_at'])
    }
    // A locking read where the dialect has one: a transaction that waited on
    // the payment row sees the refunds committed meanwhile (MySQL's
    // repeatable read would not otherwise)
    const query = trx
      .from(TABLES.refunds)
      .where({ provider, payment_id: data.paymentId })
      .select('amount')
    if (this.#caps.supportsRowLocks) {
      query.forUpdate()
    }
    const rows: { amount: number | string }[] = await query
    return rows.reduce((total, row) => total + Number(row.amount), 0)
  }

  async #syncPayment(
    trx: TransactionClientContract,
    event: WebhookEvent<PaymentWebhookData>
  ): Promise<SyncOutcome> {
    const data = event.data
    const provider = event.provider
    const now = new Date()
    const key = { provider, payment_id: data.paymentId }
    const first = firstSeenPayment(event, now)
    const inserted = first ? await this.#insertPayment(trx, first) : false
    // Locked before the refunds: refunds of one payment then sum one after another
    const row: PaymentRow | null = await this.#lock(trx, TABLES.payments, key)
    const refundsTotal = data.refunds?.length
      ? await this.#recordRefunds(trx, provider, data)
      : undefined
    if (!row || (inserted && refundsTotal === undefined)) {
      // payment.updated never creates a row; a row this event inserted is complete
      return { type: event.type }
    }
    const { changes, status, type } = nextPayment(row, event, refundsTotal, now)
    if (Object.keys(changes).length) {
      await trx
        .from(TABLES.payments)
        .where('id', row.id)
        .update({ ...changes, updated_at: now })
    }
    debug('payment %s/%s: %s -> %s on %s', provider, data.paymentId, row.status, status, event.type)
    return { type }
  }

  async #syncDispute(
    trx: TransactionClientContract,
    event: WebhookEvent<DisputeWebhookData>
  ): Promise<SyncOutcome> {
    const provider = event.provider
    const now = new Date()
    const key = { provider, dispute_id: event.data.disputeId }
    const row = { ...firstDispute(event), created_at: now, updated_at: now }
    const inserted = await this.#insertIgnore(trx, TABLES.disputes, Object.keys(key), row)
    if (!inserted) {
      const existing = await this.#lock(trx, TABLES.disputes, key)
      const changes = nextDispute(existing, event)
      if (changes) {
        await trx
          .from(TABLES.disputes)
          .where('id', existing.id)
          .update({ ...changes, updated_at: now })
      }
    }
    const payment: PaymentRow | null = await this.#lock(trx, TABLES.payments, {
      provider,
      payment_id: event.data.paymentId,
    })
    const next = payment ? paymentAfterDispute(payment, event) : null
    if (next) {
      await trx
        .from(TABLES.payments)
        .where('id', payment!.id)
        .update({ ...next, updated_at: now })
    }
    return { type: event.type }
  }

  async #syncSubscription(
    trx: TransactionClientContract,
    event: WebhookEvent<SubscriptionWebhookData>
  ): Promise<SyncOutcome> {
    const now = new Date()
    const key = { provider: event.provider, subscription_id: event.data.subscriptionId }
    const row = { ...firstSubscription(event, now), created_at: now, updated_at: now }
    if (await this.#insertIgnore(trx, TABLES.subscriptions, Object.keys(key), row)) {
      return { type: event.type }
    }
    const existing = await this.#lock(trx, TABLES.subscriptions, key)
    const changes = nextSubscription(existing, event, now)
    if (changes) {
      await trx
        .from(TABLES.subscriptions)
        .where('id', existing.id)
        .update({ ...changes, updated_at: now })
    }
    return { type: event.type }
  }
}
