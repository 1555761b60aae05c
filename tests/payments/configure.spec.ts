import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from '@japa/runner'
import Configure from '@adonisjs/core/commands/configure'
import type { FileSystem } from '@japa/file-system'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'

async function configure(fs: FileSystem) {
  const ace = await setupConsoleApp(fs)
  const command = await ace.create(Configure, [
    PACKAGE_ENTRY,
    '--features=payments',
    '--no-install',
  ])
  await command.exec()
  return command
}

test.group('Payments configure', () => {
  test('publishes the config, the six migrations once, the provider and the env variables', async ({
    assert,
    fs,
  }) => {
    const first = await configure(fs)
    assert.equal(first.exitCode ?? 0, 0)
    await configure(fs)

    await assert.fileExists('config/payments.ts')
    await assert.fileContains('config/payments.ts', 'gateways.stripe({')
    const files = await readdir(join(fs.basePath, 'database/migrations'))
    files.sort()
    assert.lengthOf(files, 6, JSON.stringify(files))
    for (const table of [
      'billing_webhook_events',
      'billing_payments',
      'billing_refunds',
      'billing_disputes',
      'billing_subscriptions',
      'billing_audit_events',
    ]) {
      assert.lengthOf(
        files.filter((file) => file.endsWith(`_create_${table}_table.ts`)),
        1
      )
    }
    await assert.fileContains('adonisrc.ts', 'adonis-atrium/providers/payments_provider')
    const rc = await fs.contents('adonisrc.ts')
    assert.equal(rc.split('adonis-atrium/providers/payments_provider').length, 2)
    await assert.fileContains('start/env.ts', 'STRIPE_WEBHOOK_SECRET: Env.schema.string.optional()')
    await assert.fileContains('start/env.ts', 'ADYEN_HMAC_KEY: Env.schema.string.optional()')
    await assert.fileContains('start/env.ts', 'PAYPAL_WEBHOOK_ID: Env.schema.string.optional()')
    await assert.fileContains('start/env.ts', 'SQUARE_WEBHOOK_URL: Env.schema.string.optional()')
    await assert.fileContains(
      'config/payments.ts',
      "// pagarme: gateways.pagarme({ secretKey: env.get('PAGARME_SECRET_KEY') }),"
    )
    await assert.fileContains('.env', 'STRIPE_WEBHOOK_SECRET')
  }).timeout(60_000)
})
