import { test } from '@japa/runner'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import Configure from '@adonisjs/core/commands/configure'
import { AppFactory } from '@adonisjs/core/factories/app'
import { MigrationRunner } from '@adonisjs/lucid/migration'
import * as Y from 'yjs'
import { PACKAGE_ENTRY, TMP_ROOT, createDatabase, setupConsoleApp } from '../helpers.ts'
import { LucidWebhookStore } from '../../src/payments/store.ts'
import { WebhookProcessor } from '../../src/payments/processor.ts'
import { FakeDriver } from '../../src/payments/drivers/fake.ts'
import { relationalStorage } from '../../src/collaboration/storage/relational.ts'

/**
 * Inside the repository, so the published migrations resolve
 * `@adonisjs/lucid` from its node_modules as they would in an app.
 */
const APP_ROOT = pathToFileURL(join(TMP_ROOT, 'published-migrations/'))

test.group('Published migrations', (group) => {
  group.each.setup(({ context }) => {
    context.fs.baseUrl = APP_ROOT
    context.fs.basePath = fileURLToPath(APP_ROOT)
  })
  group.each.timeout(120_000)

  test('the migrations configure publishes run, serve the stores and roll back', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    const configure = await ace.create(Configure, [
      PACKAGE_ENTRY,
      '--features=payments,collaboration',
      '--no-install',
    ])
    await configure.exec()
    assert.equal(configure.exitCode ?? 0, 0)

    const db = await createDatabase()
    const app = new AppFactory().create(APP_ROOT)
    await app.init()
    const migrate = async (direction: 'up' | 'down') => {
      const runner = new MigrationRunner(db, app as any, {
        direction,
        ...(direction === 'down' ? { batch: 0 } : {}),
      })
      await runner.run()
      if (runner.error) throw runner.error
      return runner
    }
    const up = await migrate('up')
    assert.lengthOf(
      Object.keys(up.migratedFiles),
      7,
      'six billing tables and the collaboration tables'
    )

    try {
      // Payments: a first delivery is recorded, synced and marked on the published schema
      const store = new LucidWebhookStore(db)
      const processor = new WebhookProcessor({
        store,
        driver: new FakeDriver({}),
        provider: 'fake',
      })
      const outcome = await processor.processEvent({
        id: 'evt_published_1',
        type: 'payment.succeeded',
        provider: 'fake',
        data: { paymentId: 'pay_1', amount: 1990, currency: 'BRL', externalReference: 'order-1' },
        raw: {},
      })
      assert.equal(outcome.status, 'processed')
      const payment = await store.findPaymentByExternalReference('order-1')
      assert.containSubset(payment, { payment_id: 'pay_1', status: 'paid' })

      // Collaboration: the update log and compaction work on the published schema
      const storage = relationalStorage({ db })
      const doc = new Y.Doc()
      doc.getText('content').insert(0, 'stored through the published tables')
      await storage.appendUpdate('notes/published', Y.encodeStateAsUpdate(doc))
      const stored = await storage.loadDocument('notes/published')
      const copy = new Y.Doc()
      for (const update of [stored!.state, ...(stored!.updates ?? [])]) {
        if (update.byteLength) Y.applyUpdate(copy, update)
      }
      assert.equal(copy.getText('content').toString(), 'stored through the published tables')
    } finally {
      await migrate('down')
    }
    assert.isFalse(await db.connection().schema.hasTable('billing_webhook_events'))
  })
})
