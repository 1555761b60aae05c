import { test } from '@japa/runner'
import type { Database } from '@adonisjs/lucid/database'
import { LucidWebhookStore } from '../../src/payments/store.ts'
import { createClaimWriter } from '../../src/payments/ledger/claim_writer.ts'
import { PostgresClaimWriter } from '../../src/payments/ledger/claim_writers/postgres.ts'
import { SqliteClaimWriter } from '../../src/payments/ledger/claim_writers/sqlite.ts'
import { StatementClaimWriter } from '../../src/payments/ledger/claim_writers/statement.ts'
import {
  MAX_ATTEMPTS,
  capabilitiesOf,
  isRetryable,
  isUniqueViolation,
  withRetry,
} from '../../src/payments/ledger/dialect.ts'
import { MAX_REJECTION_KEYS, REJECTION_WINDOW_MS } from '../../src/payments/ledger/rejections.ts'
import { normalizePayment } from '../../src/payments/ledger/tables.ts'
import { memoryDatabase } from '../pagination/memory_database.ts'
import { migrateStubs } from '../migration_stubs.ts'

/**
 * The ledger around the claim, on an in-memory SQLite through a bare Lucid
 * `Database` (no app, no files): fast enough for `npm run mutation -- ledger`
 * to run before the database specs. The claim's concurrency is covered by
 * `ledger_claim`, `concurrency` and `batching` on every database.
 */

const LEASE_MS = 60_000

async function ledger() {
  const db = memoryDatabase()
  await migrateStubs(db, 'payments')
  const store = new LucidWebhookStore(db, { processingLeaseMs: LEASE_MS })
  const rows = async () =>
    (await db.connection().from('billing_webhook_events').orderBy('id')) as any[]
  return { db, store, rows, [Symbol.asyncDispose]: () => db.manager.closeAll() }
}

function event(id: string, type = 'payment.failed', data: Record<string, unknown> = {}) {
  return { id, type, data, raw: { id }, provider: 'fake' }
}

/** An error as a driver throws it: a code and/or an errno, and a message */
function dbError(fields: Record<string, unknown>) {
  return Object.assign(new Error(String(fields.message ?? 'database error')), fields)
}

test.group('Payments ledger | dialect capabilities', () => {
  test('each dialect gets its claim writer and capabilities', ({ assert }) => {
    const of = (name: string) => capabilitiesOf({ dialect: { name } } as any)
    assert.deepEqual(of('postgres'), {
      supportsReturning: true,
      supportsRowLocks: true,
      reportsChangesPerConnection: false,
      claimWriter: 'postgres',
    })
    assert.deepEqual(of('better-sqlite3'), {
      supportsReturning: false,
      supportsRowLocks: false,
      reportsChangesPerConnection: true,
      claimWriter: 'sqlite',
    })
    for (const name of ['sqlite3', 'libsql']) {
      assert.deepEqual(of(name), {
        supportsReturning: false,
        supportsRowLocks: false,
        reportsChangesPerConnection: true,
        claimWriter: 'statement',
      })
    }
    for (const name of ['mysql', 'mysql2']) {
      assert.deepEqual(of(name), {
        supportsReturning: false,
        supportsRowLocks: true,
        reportsChangesPerConnection: false,
        claimWriter: 'statement',
      })
    }
  })

  test('the writer matches the kind', ({ assert }) => {
    const context = { db: memoryDatabase() }
    assert.instanceOf(createClaimWriter('postgres', context), PostgresClaimWriter)
    assert.instanceOf(createClaimWriter('sqlite', context), SqliteClaimWriter)
    assert.instanceOf(createClaimWriter('statement', context), StatementClaimWriter)
    assert.isTrue(createClaimWriter('sqlite', context).writesPayments)
    assert.isFalse(createClaimWriter('statement', context).writesPayments)
  })

  test('a duplicate key is recognised on every database, and nothing else is', ({ assert }) => {
    for (const fields of [
      { code: '23505' },
      { code: 'ER_DUP_ENTRY' },
      { errno: 1062 },
      { code: 'SQLITE_CONSTRAINT_UNIQUE' },
      { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' },
      { code: 'SQLITE_CONSTRAINT', message: 'UNIQUE constraint failed: t.a' },
    ]) {
      assert.isTrue(isUniqueViolation(dbError(fields)), JSON.stringify(fields))
      assert.isTrue(isRetryable(dbError(fields)), JSON.stringify(fields))
    }
    for (const fields of [
      { code: 'SQLITE_CONSTRAINT', message: 'NOT NULL constraint failed: t.a' },
      // the message is read for SQLite's generic constraint code only
      { code: 'SQLITE_ERROR', message: 'UNIQUE constraint failed: t.a' },
      { code: 'SQLITE_CONSTRAINT_NOTNULL' },
      { code: '23502' },
      { errno: 1048 },
      {},
    ]) {
      assert.isFalse(isUniqueViolation(dbError(fields)), JSON.stringify(fields))
    }
    assert.isFalse(isUniqueViolation(undefined))
    assert.isFalse(isUniqueViolation(null))
  })

  test('serialization failures, deadlocks, lock timeouts and busy are retryable', ({ assert }) => {
    for (const fields of [
      { code: '40001' },
      { code: '40P01' },
      { errno: 1213 },
      { errno: 1205 },
      { code: 'ER_LOCK_DEADLOCK' },
      { code: 'ER_LOCK_WAIT_TIMEOUT' },
      { code: 'SQLITE_BUSY' },
    ]) {
      assert.isTrue(isRetryable(dbError(fields)), JSON.stringify(fields))
      assert.isFalse(isUniqueViolation(dbError(fields)), JSON.stringify(fields))
    }
    for (const fields of [{ code: '42P01' }, { errno: 1146 }, { code: 'SQLITE_ERROR' }, {}]) {
      assert.isFalse(isRetryable(dbError(fields)), JSON.stringify(fields))
    }
    assert.isFalse(isRetryable(undefined))
  })

  test('withRetry runs a retryable failure again, at most MAX_ATTEMPTS times', async ({
    assert,
  }) => {
    assert.equal(MAX_ATTEMPTS, 6)
    let calls = 0
    const result = await withRetry('test', async () => {
      calls++
      if (calls < 3) throw dbError({ code: '40001' })
      return 'done'
    })
    assert.equal(result, 'done')
    assert.equal(calls, 3)

    calls = 0
    const busy = dbError({ code: 'SQLITE_BUSY' })
    await assert.rejects(
      () =>
        withRetry('test', async () => {
          calls++
          throw busy
        }),
      busy.message
    )
    assert.equal(calls, MAX_ATTEMPTS)

    calls = 0
    const refused = dbError({ code: 'SQLITE_ERROR', message: 'no such table' })
    await assert.rejects(
      () =>
        withRetry('test', async () => {
          calls++
          throw refused
        }),
      'no such table'
    )
    assert.equal(calls, 1)
  })
})

test.group('Payments ledger | rows around the claim', () => {
  test('a new event is recorded with its lease, raw text and normalized event', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const before = Date.now()
    assert.equal(await memory.store.claim(event('evt_1'), 'trace-1', '{"raw":1}'), 'claimed')
    const [row] = await memory.rows()
    assert.equal(row.provider, 'fake')
    assert.equal(row.event_id, 'evt_1')
    assert.equal(row.type, 'payment.failed')
    assert.equal(row.status, 'recorded')
    assert.equal(Number(row.attempts), 1)
    assert.equal(row.raw, '{"raw":1}')
    assert.deepEqual(JSON.parse(row.normalized), {
      id: 'evt_1',
      type: 'payment.failed',
      data: {},
      provider: 'fake',
    })
    assert.equal(row.trace_id, 'trace-1')
    assert.isAtLeast(Number(row.locked_until), before + LEASE_MS)
    assert.isAtMost(Number(row.locked_until), Date.now() + LEASE_MS)
  })

  test('the lease defaults to five minutes', async ({ assert }) => {
    await using memory = await ledger()
    const store = new LucidWebhookStore(memory.db)
    const before = Date.now()
    await store.claim(event('evt_default'), 't')
    const [row] = await memory.rows()
    assert.isAtLeast(Number(row.locked_until), before + 5 * 60_000)
    assert.isAtMost(Number(row.locked_until), Date.now() + 5 * 60_000)
  })

  test('processed: the status, type, processed time; the error cleared', async ({ assert }) => {
    await using memory = await ledger()
    const first = event('evt_p', 'payment.updated')
    await memory.store.claim(first, 't')
    await memory.store.markFailed(first, new Error('boom'))
    assert.equal(await memory.store.claim(first, 't2'), 'claimed')
    const before = Date.now()
    await memory.store.markProcessed({ ...first, type: 'payment.refunded' })
    const [row] = await memory.rows()
    assert.equal(row.status, 'processed')
    assert.equal(row.type, 'payment.refunded')
    assert.isNull(row.error)
    assert.isAtLeast(Number(row.processed_at), before)
    assert.isAtLeast(Number(row.updated_at), before)
    assert.equal(await memory.store.claim(first, 't3'), 'processed')
  })

  test('failed: the message is kept, at most 2,000 characters; a non-Error as text', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const long = event('evt_long')
    const text = event('evt_text')
    const other = event('evt_other')
    for (const item of [long, text, other]) await memory.store.claim(item, 't')
    await memory.store.markFailed(long, new Error('x'.repeat(2500)))
    await memory.store.markFailed(text, 'plain text')
    const rows = await memory.rows()
    assert.deepEqual(
      rows.map((row) => [row.event_id, row.status, row.error?.length ?? null]),
      [
        ['evt_long', 'failed', 2000],
        ['evt_text', 'failed', 10],
        ['evt_other', 'recorded', null],
      ]
    )
    assert.equal(rows[1].error, 'plain text')
  })

  test('a failed row is claimed again with one more attempt and a new lease', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const failed = event('evt_f')
    await memory.store.claim(failed, 't1')
    await memory.store.markFailed(failed, new Error('boom'))
    const before = Date.now()
    assert.equal(await memory.store.claim(failed, 't2'), 'claimed')
    const [row] = await memory.rows()
    assert.equal(row.status, 'recorded')
    assert.equal(Number(row.attempts), 2)
    assert.equal(row.trace_id, 't2')
    assert.isNull(row.error)
    assert.isAtLeast(Number(row.locked_until), before + LEASE_MS)
    assert.isAtLeast(Number(row.updated_at), before)
    // now held by that claim
    assert.equal(await memory.store.claim(failed, 't3'), 'in_flight')
  })

  test('a recorded row is in flight until its lease ends, then claimable', async ({ assert }) => {
    await using memory = await ledger()
    const held = event('evt_h')
    await memory.store.claim(held, 't1')
    assert.equal(await memory.store.claim(held, 't2'), 'in_flight')
    await memory.db
      .connection()
      .from('billing_webhook_events')
      .update({ locked_until: Date.now() - 1 })
    assert.equal(await memory.store.claim(held, 't3'), 'claimed')
    const [row] = await memory.rows()
    assert.equal(Number(row.attempts), 2)
    assert.equal(row.trace_id, 't3')
  })

  test('release makes a processed or failed row claimable, never a recorded one', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const done = event('evt_done')
    const held = event('evt_held')
    const other = { ...event('evt_done'), provider: 'other' }
    for (const item of [done, held, other]) await memory.store.claim(item, 't')
    await memory.store.markProcessed(done)
    await memory.store.markProcessed(other)
    await memory.store.release('fake', 'evt_done')
    await memory.store.release('fake', 'evt_held')
    const rows = await memory.rows()
    assert.deepEqual(
      rows.map((row) => [row.provider, row.event_id, row.status]),
      [
        ['fake', 'evt_done', 'failed'],
        ['fake', 'evt_held', 'recorded'],
        ['other', 'evt_done', 'processed'],
      ]
    )
    assert.equal(await memory.store.claim(done, 't2'), 'claimed')
  })

  test('listEvents filters by status, event id and provider, in insertion order', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const items = [event('a'), event('b'), { ...event('a'), provider: 'other' }, event('c')]
    for (const item of items) await memory.store.claim(item, 't')
    await memory.store.markFailed(items[1], 'x')
    await memory.store.markFailed(items[2], 'x')
    const ids = (rows: any[]) => rows.map((row) => `${row.provider}/${row.event_id}`)
    assert.deepEqual(ids(await memory.store.listEvents({})), [
      'fake/a',
      'fake/b',
      'other/a',
      'fake/c',
    ])
    assert.deepEqual(ids(await memory.store.listEvents({ status: 'failed' })), [
      'fake/b',
      'other/a',
    ])
    assert.deepEqual(ids(await memory.store.listEvents({ eventId: 'a' })), ['fake/a', 'other/a'])
    assert.deepEqual(ids(await memory.store.listEvents({ provider: 'fake' })), [
      'fake/a',
      'fake/b',
      'fake/c',
    ])
    assert.deepEqual(
      ids(await memory.store.listEvents({ status: 'failed', provider: 'other', eventId: 'a' })),
      ['other/a']
    )
  })
})

test.group('Payments ledger | payment lookups', () => {
  async function payments(db: Database) {
    const at = new Date()
    await db
      .connection()
      .table('billing_payments')
      .multiInsert([
        {
          provider: 'fake',
          payment_id: 'p1',
          status: 'paid',
          amount: 100,
          currency: 'usd',
          refunded_amount: 0,
          external_reference: 'order-1',
          created_at: at,
          updated_at: at,
        },
        {
          provider: 'fake',
          payment_id: 'p2',
          status: 'refunded',
          amount: 250,
          currency: 'usd',
          refunded_amount: 250,
          external_reference: 'order-1',
          created_at: at,
          updated_at: at,
        },
        {
          provider: 'other',
          payment_id: 'p1',
          status: 'pending',
          amount: 7,
          currency: 'brl',
          refunded_amount: 0,
          external_reference: 'order-2',
          created_at: at,
          updated_at: at,
        },
      ])
  }

  test('by external reference: the newest payment, money as numbers', async ({ assert }) => {
    await using memory = await ledger()
    await payments(memory.db)
    const found = await memory.store.findPaymentByExternalReference('order-1')
    assert.equal(found?.payment_id, 'p2')
    assert.strictEqual(found?.amount, 250)
    assert.strictEqual(found?.refunded_amount, 250)
    const second = await memory.store.findPaymentByExternalReference('order-2')
    assert.equal(second?.provider, 'other')
    assert.isNull(await memory.store.findPaymentByExternalReference('order-3'))
  })

  test('by provider and payment id', async ({ assert }) => {
    await using memory = await ledger()
    await payments(memory.db)
    const found = await memory.store.findPayment('other', 'p1')
    assert.equal(found?.status, 'pending')
    assert.strictEqual(found?.amount, 7)
    const sameId = await memory.store.findPayment('fake', 'p1')
    assert.equal(sameId?.status, 'paid')
    assert.isNull(await memory.store.findPayment('other', 'p2'))
  })

  test('normalizePayment turns bigint strings into numbers and keeps the rest', ({ assert }) => {
    assert.deepEqual(
      normalizePayment({
        id: 1,
        amount: '9007199254740991',
        refunded_amount: '-5',
        currency: 'usd',
      }),
      { id: 1, amount: 9007199254740991, refunded_amount: -5, currency: 'usd' } as any
    )
  })
})

test.group('Payments ledger | schema check', () => {
  test('a missing table or column names itself and the fix; the check runs again', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const schema = memory.db.connection().schema
    await schema.alterTable('billing_payments', (table) => table.dropColumn('last_event_at'))
    await schema.dropTable('billing_audit_events')
    const store = new LucidWebhookStore(memory.db)
    const error = await store.ensureSchema().catch((caught) => caught)
    assert.equal(error.code, 'E_PAYMENTS_SCHEMA')
    assert.deepEqual(error.details.missing, [
      'billing_payments.last_event_at',
      'billing_audit_events',
    ])
    assert.include(error.message, 'node ace migration:run')
    await assert.rejects(() => store.claim(event('evt'), 't'), /billing_audit_events/)

    // fixed while the app runs: the next use checks again and goes through
    await migrateStubs(memory.db, 'payments')
    assert.equal(await store.claim(event('evt'), 't'), 'claimed')
  })

  test('every column added after the first release is checked', async ({ assert }) => {
    const required: Array<[string, string]> = [
      ['billing_webhook_events', 'locked_until'],
      ['billing_webhook_events', 'attempts'],
      ['billing_payments', 'external_reference'],
      ['billing_payments', 'last_event_at'],
      ['billing_subscriptions', 'last_event_at'],
      ['billing_audit_events', 'bucket_key'],
      ['billing_audit_events', 'window_start'],
      ['billing_audit_events', 'occurrences'],
    ]
    for (const [table, column] of required) {
      await using memory = await ledger()
      await memory.db.connection().schema.alterTable(table, (builder) => builder.dropColumn(column))
      const error = await new LucidWebhookStore(memory.db).ensureSchema().catch((caught) => caught)
      assert.equal(error?.code, 'E_PAYMENTS_SCHEMA', `${table}.${column}`)
      assert.include(error.message, `${table}.${column}`)
    }
  })
})

test.group('Payments ledger | rejection counters', (group) => {
  // the counters start again each minute: keep each test inside one window
  group.each.setup(async () => {
    const left = REJECTION_WINDOW_MS - (Date.now() % REJECTION_WINDOW_MS)
    if (left < 5000) await new Promise((resolve) => setTimeout(resolve, left + 10))
  })

  async function counters(db: Database) {
    return (await db.connection().from('billing_audit_events').orderBy('id')) as any[]
  }

  test('one row per provider, type and reason per minute, counting', async ({ assert }) => {
    await using memory = await ledger()
    const reject = { provider: 'stripe', type: 'rejected', reason: 'bad signature' }
    await memory.store.audit({ ...reject, traceId: 'a' })
    await memory.store.audit({ ...reject, traceId: 'b' })
    await memory.store.audit({ ...reject, reason: 'stale timestamp' })
    await memory.store.audit({ ...reject, reason: 'unknown event', traceId: 'c' })
    const rows = await counters(memory.db)
    assert.lengthOf(rows, 3)
    assert.equal(rows[2].trace_id, 'c')
    assert.equal(Number(rows[0].occurrences), 2)
    assert.equal(rows[0].trace_id, 'b')
    assert.equal(rows[0].provider, 'stripe')
    assert.equal(rows[0].type, 'rejected')
    assert.equal(rows[0].reason, 'bad signature')
    assert.isNull(rows[1].trace_id)
    assert.equal(Number(rows[1].occurrences), 1)
    assert.notEqual(rows[0].bucket_key, rows[1].bucket_key)
    assert.match(rows[0].bucket_key, /^[0-9a-f]{64}$/)
    const windowStart = Number(rows[0].window_start)
    assert.equal(windowStart % REJECTION_WINDOW_MS, 0)
    assert.isAtMost(Date.now() - windowStart, REJECTION_WINDOW_MS)
  })

  test('the cap on distinct keys starts again with each minute', async ({ assert }) => {
    await using memory = await ledger()
    const realNow = Date.now
    const windowStart = realNow() - (realNow() % REJECTION_WINDOW_MS)
    try {
      Date.now = () => windowStart + 10
      for (let index = 0; index < MAX_REJECTION_KEYS + 1; index++) {
        await memory.store.audit({ provider: `p${index}`, type: 'rejected', reason: 'x' })
      }
      Date.now = () => windowStart + REJECTION_WINDOW_MS + 10
      await memory.store.audit({ provider: 'next-minute', type: 'rejected', reason: 'x' })
    } finally {
      Date.now = realNow
    }
    const rows = await counters(memory.db)
    assert.deepEqual(
      rows.slice(-2).map((row) => [row.provider, Number(row.window_start)]),
      [
        ['*', windowStart],
        ['next-minute', windowStart + REJECTION_WINDOW_MS],
      ]
    )
  })

  test('the key separates its parts', async ({ assert }) => {
    await using memory = await ledger()
    await memory.store.audit({ provider: 'ab', type: 'c', reason: 'd' })
    await memory.store.audit({ provider: 'a', type: 'bc', reason: 'd' })
    await memory.store.audit({ provider: 'a', type: 'b', reason: 'cd' })
    assert.lengthOf(await counters(memory.db), 3)
  })

  test('long fields are cut; distinct keys over the cap share one overflow row', async ({
    assert,
  }) => {
    await using memory = await ledger()
    await memory.store.audit({
      provider: 'p'.repeat(150),
      type: 't'.repeat(80),
      reason: 'r'.repeat(1500),
    })
    const [cut] = await counters(memory.db)
    assert.lengthOf(cut.provider, 100)
    assert.lengthOf(cut.type, 64)
    assert.lengthOf(cut.reason, 1000)

    for (let index = 1; index < MAX_REJECTION_KEYS + 5; index++) {
      await memory.store.audit({ provider: `invented-${index}`, type: 'rejected', reason: 'x' })
    }
    // an already counted key keeps counting on its own row
    await memory.store.audit({ provider: 'invented-1', type: 'rejected', reason: 'x' })
    const rows = await counters(memory.db)
    assert.lengthOf(rows, MAX_REJECTION_KEYS + 1)
    const overflow = rows.at(-1)
    assert.equal(overflow.provider, '*')
    assert.equal(overflow.reason, 'other rejections (distinct reasons over the cap)')
    assert.equal(Number(overflow.occurrences), 5)
    assert.equal(Number(rows[1].occurrences), 2)
  })
})

test.group('Payments ledger | claim writers', () => {
  function item(eventId: string, payment?: Record<string, unknown>) {
    return {
      provider: 'fake',
      eventId,
      type: 'payment.succeeded',
      raw: '{}',
      normalized: '{}',
      traceId: 'trace',
      lockedUntil: Date.now() + LEASE_MS,
      at: new Date(),
      payment: payment as any,
    }
  }

  test('one statement per call: the unique key decides; mark writes the outcome', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const writer = createClaimWriter('statement', { db: memory.db })
    assert.deepEqual(await writer.claim(item('evt_s')), { claimed: true })
    assert.deepEqual(await writer.claim(item('evt_s')), { claimed: false })
    const [claimed] = await memory.rows()
    assert.deepEqual(
      [claimed.status, Number(claimed.attempts), claimed.trace_id, claimed.processed_at],
      ['recorded', 1, 'trace', null]
    )
    assert.deepEqual(await writer.claim(item('evt_other')), { claimed: true })
    await writer.mark({ provider: 'fake', eventId: 'evt_s', type: 'payment.refunded' })
    const [row, other] = await memory.rows()
    assert.deepEqual([other.event_id, other.status], ['evt_other', 'recorded'])
    assert.deepEqual(
      [row.status, row.type, Number(row.attempts), row.trace_id, row.error],
      ['processed', 'payment.refunded', 1, 'trace', null]
    )
    assert.isNotNull(row.processed_at)
    // any other failure is the caller's to see
    await memory.db.connection().schema.dropTable('billing_webhook_events')
    await assert.rejects(() => writer.claim(item('evt_t')), /billing_webhook_events/)
  })

  test('group commit: a duplicate in the same batch loses; a refused payment keeps the claim', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const writer = createClaimWriter('sqlite', { db: memory.db })
    const payment = {
      provider: 'fake',
      payment_id: 'pay_1',
      status: 'paid',
      amount: 100,
      currency: 'usd',
      refunded_amount: 0,
      customer_id: null,
      paid_at: null,
      external_reference: null,
      last_event_at: 1,
    }
    const [first, duplicate, other] = await Promise.all([
      writer.claim(item('evt_a', payment)),
      writer.claim(item('evt_a', payment)),
      writer.claim(item('evt_b', { ...payment, payment_id: 'pay_2' })),
    ])
    assert.deepEqual(first, { claimed: true, payment: 'inserted' })
    assert.deepEqual(duplicate, { claimed: false })
    assert.deepEqual(other, { claimed: true, payment: 'inserted' })
    assert.deepEqual(await writer.claim(item('evt_c', payment)), {
      claimed: true,
      payment: 'exists',
    })
    // status is NOT NULL: the database refuses the payment row, not the claim
    assert.deepEqual(
      await writer.claim(item('evt_d', { ...payment, payment_id: 'p', status: null })),
      {
        claimed: true,
      }
    )
    const events = await memory.rows()
    assert.deepEqual(
      events.map((row) => row.event_id),
      ['evt_a', 'evt_b', 'evt_c', 'evt_d']
    )
    const payments = await memory.db.connection().from('billing_payments').orderBy('id')
    assert.deepEqual(
      payments.map((row: any) => row.payment_id),
      ['pay_1', 'pay_2']
    )
    // a lone claim without a payment that fails is reported
    await memory.db.connection().schema.dropTable('billing_webhook_events')
    await assert.rejects(() => writer.claim(item('evt_e')), /billing_webhook_events/)
  })

  test('a batch the database refuses runs again item by item: only the refused payment is lost', async ({
    assert,
  }) => {
    await using memory = await ledger()
    const writer = createClaimWriter('sqlite', { db: memory.db })
    const paidAt = new Date('2026-01-02T03:04:05.678Z')
    const payment = {
      provider: 'fake',
      payment_id: 'pay_ok',
      status: 'paid',
      amount: 100,
      currency: 'usd',
      refunded_amount: 0,
      customer_id: 'cus_1',
      paid_at: paidAt,
      external_reference: 'order-9',
      last_event_at: 7,
    }
    // one tick, one batch: the refused payment row (status is NOT NULL) fails the statement
    const results = await Promise.all([
      writer.claim(item('evt_bad', { ...payment, payment_id: 'pay_bad', status: null })),
      writer.claim(item('evt_ok', payment)),
    ])
    assert.deepEqual(results, [{ claimed: true }, { claimed: true, payment: 'inserted' }])
    const events = await memory.rows()
    assert.sameMembers(
      events.map((row) => row.event_id),
      ['evt_bad', 'evt_ok']
    )
    const [stored] = await memory.db.connection().from('billing_payments')
    assert.deepEqual(
      [stored.payment_id, Number(stored.paid_at), stored.customer_id, stored.external_reference],
      ['pay_ok', paidAt.valueOf(), 'cus_1', 'order-9']
    )
  })

  test('statements are prepared once per connection, not per claim', async ({ assert }) => {
    await using memory = await ledger()
    const writer = createClaimWriter('sqlite', { db: memory.db })
    const knex = memory.db.connection().getWriteClient().client
    const connection = await knex.acquireConnection()
    await knex.releaseConnection(connection)
    const prepare = connection.prepare
    let prepared = 0
    connection.prepare = function (...args: unknown[]) {
      prepared++
      return prepare.apply(this, args)
    }
    await writer.claim(item('evt_1'))
    await writer.mark({ provider: 'fake', eventId: 'evt_1', type: 'payment.succeeded' })
    const first = prepared
    await writer.claim(item('evt_2'))
    await writer.mark({ provider: 'fake', eventId: 'evt_2', type: 'payment.succeeded' })
    assert.isAbove(first, 0)
    assert.equal(prepared, first)
  })
})
