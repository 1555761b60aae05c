import { test } from '@japa/runner'
import { Database } from '@adonisjs/lucid/database'
import { AppFactory } from '@adonisjs/core/factories/app'
import { Emitter } from '@adonisjs/core/events'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { LucidWebhookStore } from '../../src/payments/store.ts'
import type { WebhookEvent } from '../../src/payments/types.ts'
import { connectionConfig, dialect } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'

/**
 * The ledger's hot statements on PostgreSQL, where a prepared statement
 * keeps one plan per connection: they must not be prepared while the
 * ledger is nearly empty, or that plan (a sequential scan) stays for the
 * connection's life. One pooled connection, so every statement of the
 * store and of the test meets the same plan cache.
 */
async function singleConnectionDatabase() {
  const db = new Database(
    {
      connection: 'pg',
      connections: { pg: { ...connectionConfig('pg'), pool: { min: 1, max: 1 } } },
    },
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(new URL('file:///tmp/')))
  )
  await migrateStubs(db, 'payments')
  return db
}

function paymentEvent(index: number): WebhookEvent {
  return {
    id: `evt_plan_${index}`,
    provider: 'stripe',
    type: 'payment.succeeded',
    occurredAt: new Date().toISOString(),
    data: { paymentId: `pi_plan_${index}`, amount: 1000, currency: 'usd', status: 'succeeded' },
    raw: { id: `evt_plan_${index}` },
  } as WebhookEvent
}

/** Claims, syncs and marks events `from`..`to` (exclusive), ten at a time as concurrent deliveries do */
async function deliver(store: LucidWebhookStore, from: number, to: number) {
  for (let start = from; start < to; start += 10) {
    const events = Array.from({ length: Math.min(10, to - start) }, (_, i) =>
      paymentEvent(start + i)
    )
    await Promise.all(
      events.map(async (event) => {
        await store.claim(event, 'trace')
        await store.sync(event)
        await store.markProcessed(event)
      })
    )
  }
}

async function preparedStatements(db: Database) {
  const { rows } = await db.connection().rawQuery('select name from pg_prepared_statements')
  return (rows as { name: string }[]).map(({ name }) => name).filter((n) => n.startsWith('atrium'))
}

if (dialect() === 'pg') {
  test.group('Payments ledger statements on PostgreSQL', () => {
    test('the claim and mark statements are prepared only once the ledger has grown, and then read it by its key', async ({
      assert,
      cleanup,
    }) => {
      const db = await singleConnectionDatabase()
      cleanup(async () => {
        await dropStubTables(db, 'payments')
        await db.manager.closeAll()
      })
      const store = new LucidWebhookStore(db)

      await deliver(store, 0, 200)
      assert.deepEqual(await preparedStatements(db), [], 'planned at every call while small')

      await deliver(store, 200, 1100)
      assert.sameMembers(await preparedStatements(db), [
        'atrium_payments_claim',
        'atrium_payments_mark',
      ])

      // Past the sixth run PostgreSQL may use a generic plan: whichever it keeps must probe the key
      const { rows } = await db
        .connection()
        .rawQuery(
          `explain (format json) execute atrium_payments_mark(now(), '{stripe}', '{evt_plan_5}', '{payment.succeeded}')`
        )
      const plan = JSON.stringify(rows[0]['QUERY PLAN'])
      assert.include(plan, 'billing_webhook_events_provider_event_id_unique')
      assert.notInclude(plan, 'Seq Scan')

      const processed = await db
        .from('billing_webhook_events')
        .where('status', 'processed')
        .count('* as total')
      assert.equal(Number(processed[0].total), 1100)
    })
  })
}
