import { test } from '@japa/runner'
import { WriteBatcher } from '../../src/payments/batcher.ts'
import type { Database } from '@adonisjs/lucid/database'
import { fakeEvent, paymentsApp } from './helpers.ts'

/**
 * A trigger that makes the database refuse a payment row in one currency,
 * the same way on SQLite, PostgreSQL and MySQL (dropped with the table).
 */
async function refusePaymentsInCurrency(db: Database, currency: string) {
  const client = db.connection()
  const message = 'refused by test trigger'
  switch (client.dialect.name) {
    case 'postgres':
      await client.rawQuery(`create or replace function atrium_test_refuse() returns trigger as $$
        begin
          if new.currency = '${currency}' then raise exception '${message}'; end if;
          return new;
        end $$ language plpgsql`)
      await client.rawQuery(`create trigger atrium_test_refuse before insert on billing_payments
        for each row execute function atrium_test_refuse()`)
      break
    case 'mysql':
      await client.rawQuery(`create trigger atrium_test_refuse before insert on billing_payments
        for each row begin
          if new.currency = '${currency}' then
            signal sqlstate '45000' set message_text = '${message}';
          end if;
        end`)
      break
    default:
      await client.rawQuery(`create trigger atrium_test_refuse before insert on billing_payments
        when new.currency = '${currency}' begin select raise(abort, '${message}'); end`)
  }
}

function recordingBatcher(fail?: (item: string) => boolean) {
  const batches: string[][] = []
  const batcher = new WriteBatcher<string, string>({
    key: (item) => item.split(':')[0],
    run: async (items) => {
      batches.push(items)
      if (fail && items.some(fail)) {
        throw new Error(`refused ${items.find(fail)}`)
      }
      return items.map((item) => `ok ${item}`)
    },
  })
  return { batcher, batches }
}

test.group('Payments write batcher', () => {
  test('writes added in one tick share one batch and each caller gets its own result', async ({
    assert,
  }) => {
    const { batcher, batches } = recordingBatcher()
    const results = await Promise.all(['a', 'b', 'c'].map((item) => batcher.add(item)))
    assert.deepEqual(results, ['ok a', 'ok b', 'ok c'])
    assert.deepEqual(batches, [['a', 'b', 'c']])
  })

  test('two writes of one key never ride in the same batch', async ({ assert }) => {
    const { batcher, batches } = recordingBatcher()
    await Promise.all(['a:1', 'b:1', 'a:2'].map((item) => batcher.add(item)))
    assert.isTrue(batches.every((batch) => new Set(batch.map((i) => i[0])).size === batch.length))
    assert.sameMembers(batches.flat(), ['a:1', 'b:1', 'a:2'])
  })

  test('with a duplicate answer, a second write of a key is answered after its batch ran', async ({
    assert,
  }) => {
    const batches: string[][] = []
    const batcher = new WriteBatcher<string, string>({
      key: (item) => item.split(':')[0],
      duplicate: (item) => `lost ${item}`,
      run: async (items) => {
        batches.push(items)
        return items.map((item) => `won ${item}`)
      },
    })
    const results = await Promise.all(['a:1', 'b:1', 'a:2'].map((item) => batcher.add(item)))
    assert.deepEqual(results, ['won a:1', 'won b:1', 'lost a:2'])
    assert.deepEqual(batches, [['a:1', 'b:1']])
  })

  test('a refused batch is retried item by item so only the bad item fails', async ({ assert }) => {
    const { batcher } = recordingBatcher((item) => item === 'bad')
    const results = await Promise.allSettled(['a', 'bad', 'c'].map((item) => batcher.add(item)))
    assert.deepEqual(
      results.map((result) => result.status),
      ['fulfilled', 'rejected', 'fulfilled']
    )
    assert.equal((results[1] as PromiseRejectedResult).reason.message, 'refused bad')
  })
})

test.group('Payments route under parallel deliveries', () => {
  test('parallel first deliveries of distinct events are each recorded, synced and processed once', async ({
    assert,
  }) => {
    const seen: string[] = []
    const app = await paymentsApp({
      config: {
        billing: { handlers: { 'payment.succeeded': (event) => void seen.push(event.id) } },
      },
    })
    const ids = Array.from({ length: 30 }, (_, index) => index)
    const responses = await Promise.all(
      ids.map((index) =>
        app.deliver(
          'fake',
          fakeEvent(`evt_p${index}`, 'payment.succeeded', {
            paymentId: `pay_p${index}`,
            amount: 100 + index,
            currency: 'BRL',
          })
        )
      )
    )
    assert.deepEqual(
      responses.map((response) => response.status),
      ids.map(() => 200)
    )
    assert.sameMembers(
      seen,
      ids.map((index) => `evt_p${index}`)
    )
    const events = await app.rows('events')
    assert.lengthOf(events, 30)
    assert.isTrue(events.every((row: any) => row.status === 'processed' && row.processed_at))
    const payments = await app.rows('payments')
    assert.lengthOf(payments, 30)
    assert.isTrue(payments.every((row: any) => row.status === 'paid'))
    const amounts = payments.map((row: any) => [row.payment_id, Number(row.amount)])
    assert.sameDeepMembers(
      amounts,
      ids.map((index) => [`pay_p${index}`, 100 + index])
    )
  })

  test('a payment row the database refuses fails its own event only, and its ledger row stays', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    await refusePaymentsInCurrency(app.db, 'REFUSED')
    const events = Array.from({ length: 12 }, (_, index) =>
      fakeEvent(`evt_b${index}`, 'payment.succeeded', {
        paymentId: `pay_b${index}`,
        amount: 500,
        currency: index === 5 ? 'REFUSED' : 'BRL',
      })
    )
    const responses = await Promise.all(events.map((event) => app.deliver('fake', event)))
    assert.deepEqual(
      responses.map((response) => response.status),
      events.map((_, index) => (index === 5 ? 500 : 200))
    )
    const rows = await app.rows('events')
    assert.lengthOf(rows, 12)
    for (const [index, event] of events.entries()) {
      const row = rows.find((candidate: any) => candidate.event_id === event.id)
      assert.equal(row.status, index === 5 ? 'failed' : 'processed', event.id)
      assert.deepEqual(JSON.parse(row.raw), event)
    }
    assert.match(rows.find((row: any) => row.event_id === 'evt_b5').error, /refused by test/)
    const payments = await app.rows('payments')
    assert.sameMembers(
      payments.map((row: any) => row.payment_id),
      events.filter((_, index) => index !== 5).map((event) => event.data.paymentId)
    )
  })

  test('parallel success and failure of one new payment leave one row, paid', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const responses = await Promise.all([
      app.deliver(
        'fake',
        fakeEvent('evt_s', 'payment.succeeded', { paymentId: 'pay_sf', amount: 700 })
      ),
      app.deliver(
        'fake',
        fakeEvent('evt_f', 'payment.failed', { paymentId: 'pay_sf', amount: 700 })
      ),
    ])
    assert.deepEqual(
      responses.map((response) => response.status),
      [200, 200]
    )
    const payments = await app.rows('payments')
    assert.lengthOf(payments, 1)
    assert.equal(payments[0].status, 'paid')
    const events = await app.rows('events')
    assert.deepEqual(
      events.map((row: any) => row.status),
      ['processed', 'processed']
    )
  })
})
