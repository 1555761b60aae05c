import type { ClaimBatchResult, ClaimItem, ClaimWriterContext, MarkItem } from '../claim_writer.ts'
import { BatchedClaimWriter } from './batched.ts'
import { TABLES } from '../tables.ts'

const CLAIM = `with v as (
    select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
      $7::bigint[], $8::timestamptz[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::bigint[],
      $14::text[], $15::timestamptz[], $16::text[], $17::bigint[])
    as v(provider, event_id, type, raw, normalized, trace_id, locked_until, at, payment_id,
      status, amount, currency, refunded_amount, customer_id, paid_at, external_reference, last_event_at)
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
      refunded_amount, customer_id, paid_at, external_reference, last_event_at, created_at, updated_at)
    select v.provider, v.payment_id, v.status, v.amount, v.currency,
      coalesce(v.refunded_amount, (select coalesce(sum(r.amount), 0) from ${TABLES.refunds} r
        where r.provider = v.provider and r.payment_id = v.payment_id)),
      v.customer_id, v.paid_at, v.external_reference, v.last_event_at, v.at, v.at
    from v join c on c.provider = v.provider and c.event_id = v.event_id
    where v.payment_id is not null
    order by v.provider, v.payment_id
    on conflict (provider, payment_id) do nothing
    returning provider, payment_id
  )
  select 'e' as kind, provider, event_id as key from c
  union all select 'p', provider, payment_id from p`

const MARK = `update ${TABLES.events} as e
  set status = 'processed', type = v.type, error = null, processed_at = $1, updated_at = $1
  from unnest($2::text[], $3::text[], $4::text[]) as v(provider, event_id, type)
  where e.provider = v.provider and e.event_id = v.event_id`

/**
 * Rows this writer claims before its statements are prepared. A prepared
 * statement keeps the generic plan PostgreSQL makes at its sixth run; made
 * over a nearly empty ledger, that plan scans the whole table, and only an
 * ANALYZE replaces it (never, with autovacuum off). Until then each call is
 * planned from the table's current size.
 */
const CLAIMS_BEFORE_PREPARING = 1000

/**
 * PostgreSQL: each batch is one autocommit statement, a data-modifying CTE
 * over the batch's arrays, prepared once per connection after the first
 * claims; rows are inserted in key order so concurrent batches take their
 * locks in one order.
 */
export class PostgresClaimWriter extends BatchedClaimWriter {
  #context: ClaimWriterContext
  #claimed = 0

  constructor(context: ClaimWriterContext) {
    super()
    this.#context = context
  }

  protected async runClaims(items: ClaimItem[]): Promise<ClaimBatchResult[]> {
    const columns: unknown[][] = Array.from({ length: 17 }, () => [])
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
        payment?.payment_id ?? null,
        payment?.status ?? null,
        payment?.amount ?? null,
        payment?.currency ?? null,
        payment?.refunded_amount ?? null,
        payment?.customer_id ?? null,
        payment?.paid_at ?? null,
        payment?.external_reference ?? null,
        payment?.last_event_at ?? null,
      ]
      values.forEach((value, index) => columns[index].push(value))
    }
    const result = await this.#query('atrium_payments_claim', CLAIM, columns)
    this.#claimed += items.length
    const claimed = new Set<string>()
    const inserted = new Set<string>()
    for (const row of result.rows as { kind: string; provider: string; key: string }[]) {
      ;(row.kind === 'e' ? claimed : inserted).add(`${row.provider}\0${row.key}`)
    }
    return items.map((item) => {
      const isClaimed = claimed.has(`${item.provider}\0${item.eventId}`)
      if (!isClaimed || !item.payment) {
        return { claimed: isClaimed }
      }
      const key = `${item.provider}\0${item.payment.payment_id}`
      return { claimed: true, payment: inserted.has(key) ? 'inserted' : 'exists' }
    })
  }

  protected async runMarks(items: MarkItem[]) {
    await this.#query('atrium_payments_mark', MARK, [
      new Date(),
      items.map((item) => item.provider),
      items.map((item) => item.eventId),
      items.map((item) => item.type),
    ])
  }

  /**
   * Runs a hot statement on a pooled connection of the write client,
   * skipping the query builder: unnamed (planned at every call) for the
   * first claims, then as a named prepared statement, parsed and planned
   * once per connection.
   */
  async #query(name: string, text: string, values: unknown[]) {
    const client = this.#context.db.connection(this.#context.connection)
    const knex = client.getWriteClient().client
    const connection = await knex.acquireConnection()
    const query =
      this.#claimed < CLAIMS_BEFORE_PREPARING ? { text, values } : { name, text, values }
    try {
      return (await connection.query(query)) as { rows: any[] }
    } finally {
      await knex.releaseConnection(connection)
    }
  }
}
