import { test } from '@japa/runner'
import { paymentsApp } from './helpers.ts'

/**
 * The ledger's claim, statement by statement: what the claim itself writes
 * (before any sync or handler runs) and which row a redelivery reads.
 * Written against the survivors of `npm run mutation -- ledger-claim`.
 */

/** The group-committing writers (SQLite, PostgreSQL) insert the first-seen payment with the claim */
const claimWritesPayments = process.env.DB !== 'mysql'

function event(id: string, type: string, data: Record<string, unknown>, raw: unknown = { id }) {
  return { id, type, data, raw, provider: 'fake' }
}

test.group('Payments ledger | the claim', () => {
  test("a redelivery reads its own row, not another event's", async ({ assert }) => {
    const app = await paymentsApp()
    const manager = await app.app.container.make('atrium.payments')
    const done = event('evt_done', 'payment.succeeded', { paymentId: 'p1', amount: 1 })
    const failed = event('evt_failed', 'payment.succeeded', { paymentId: 'p2', amount: 1 })
    assert.equal(await manager.store.claim(done, 't1'), 'claimed')
    await manager.store.markProcessed(done)
    assert.equal(await manager.store.claim(failed, 't2'), 'claimed')
    await app.db
      .connection()
      .from('billing_webhook_events')
      .where('event_id', 'evt_failed')
      .update({ status: 'failed', locked_until: Date.now() - 1 })

    // the failed one is claimed again; the processed one stays processed
    assert.equal(await manager.store.claim(failed, 't3'), 'claimed')
    assert.equal(await manager.store.claim(done, 't4'), 'processed')
    const rows = await app.rows('events')
    assert.deepEqual(
      rows.map((row: any) => [row.event_id, row.status, Number(row.attempts), row.trace_id]),
      [
        ['evt_done', 'processed', 1, 't1'],
        ['evt_failed', 'recorded', 2, 't3'],
      ]
    )
  })

  test("without the raw text, the ledger keeps the event's raw payload as JSON", async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const manager = await app.app.container.make('atrium.payments')
    await manager.store.claim(
      event('evt_raw', 'payment.failed', { paymentId: 'p' }, { gateway: 'payload' }),
      't'
    )
    await manager.store.claim(
      { ...event('evt_no_raw', 'payment.failed', { paymentId: 'q' }), raw: undefined },
      't'
    )
    await manager.store.claim(
      event('evt_text', 'payment.failed', { paymentId: 'r' }),
      't',
      '{"exact":"bytes"}'
    )
    const rows = await app.rows('events')
    assert.deepEqual(
      rows.map((row: any) => row.raw),
      ['{"gateway":"payload"}', 'null', '{"exact":"bytes"}']
    )
  })

  test("the claim of a first-seen payment writes its row in the same commit; a refund's never does", async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const manager = await app.app.container.make('atrium.payments')
    await manager.store.claim(
      event('evt_paid', 'payment.succeeded', {
        paymentId: 'pay_1',
        amount: 1290,
        currency: 'BRL',
        externalReference: 'order-1',
      }),
      't'
    )
    await manager.store.claim(
      event('evt_refund', 'payment.refunded', {
        paymentId: 'pay_2',
        amount: 500,
        refunds: [{ refundId: 're_1', amount: 500 }],
      }),
      't'
    )
    await manager.store.claim(event('evt_no_id', 'payment.succeeded', { amount: 1 }), 't')
    // no sync has run: only what the claim statement itself wrote is there
    const payments = await app.rows('payments')
    if (claimWritesPayments) {
      assert.deepEqual(
        payments.map((row: any) => [
          row.payment_id,
          row.status,
          Number(row.amount),
          row.external_reference,
        ]),
        [['pay_1', 'paid', 1290, 'order-1']]
      )
    } else {
      assert.lengthOf(payments, 0)
    }

    // then the sync applies the event once: the row is the same, not doubled
    await manager.store.sync(
      event('evt_paid', 'payment.succeeded', {
        paymentId: 'pay_1',
        amount: 1290,
        currency: 'BRL',
        externalReference: 'order-1',
      })
    )
    const after = await app.rows('payments')
    assert.deepEqual(
      after.map((row: any) => [row.payment_id, row.status, Number(row.amount)]),
      [['pay_1', 'paid', 1290]]
    )
  })
})
