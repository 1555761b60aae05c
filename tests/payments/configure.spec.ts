import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from '@japa/runner'
import Configure from '@adonisjs/core/commands/configure'
import type { FileSystem } from '@japa/file-system'
import { PACKAGE_ENTRY, setupConsoleApp } from '../helpers.ts'
import { SELECT_GATEWAYS } from '../../src/payments/configure.ts'

async function configure(fs: FileSystem, flags: string[] = []) {
  const ace = await setupConsoleApp(fs)
  const command = await ace.create(Configure, [
    PACKAGE_ENTRY,
    '--features=payments',
    '--no-install',
    ...flags,
  ])
  await command.exec()
  const output = ace.ui.logger
    .getLogs()
    .map(({ message }) => message)
    .join('\n')
  return Object.assign(command, { output })
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

  test('--gateways enables the chosen gateways, declares their variables and lists their SDKs', async ({
    assert,
    fs,
  }) => {
    const command = await configure(fs, ['--gateways=paddle,mollie'])
    assert.equal(command.exitCode ?? 0, 0)
    await assert.fileContains(
      'config/payments.ts',
      "    paddle: gateways.paddle({ webhookSecret: env.get('PADDLE_WEBHOOK_SECRET') }),"
    )
    await assert.fileContains('config/payments.ts', '    mollie: gateways.mollie({')
    await assert.fileContains('config/payments.ts', '    // stripe: gateways.stripe({')
    await assert.fileContains('.env', 'PADDLE_WEBHOOK_SECRET')
    await assert.fileContains('.env', 'MOLLIE_API_KEY')
    await assert.fileNotContains('.env', 'STRIPE_WEBHOOK_SECRET')
    // every gateway's variables are validated, set or not
    await assert.fileContains('start/env.ts', 'STRIPE_WEBHOOK_SECRET: Env.schema.string.optional()')
    assert.include(command.output, 'yellow(npm i) @paddle/paddle-node-sdk @mollie/api-client')
    assert.notInclude(command.output, 'stripe')
  }).timeout(60_000)

  test('in a terminal the gateways are chosen in a prompt; gateways without an SDK add no package', async ({
    assert,
    fs,
  }) => {
    const ace = await setupConsoleApp(fs)
    ace.prompt.trap(SELECT_GATEWAYS).replyWith(['polar', 'woovi'])
    const command = await ace.create(Configure, [
      PACKAGE_ENTRY,
      '--features=payments',
      '--no-install',
    ])
    await command.exec()
    assert.equal(command.exitCode ?? 0, 0)
    assert.equal(ace.prompt.traps.prompts.size, 0)
    await assert.fileContains(
      'config/payments.ts',
      "    polar: gateways.polar({ webhookSecret: env.get('POLAR_WEBHOOK_SECRET') }),"
    )
    await assert.fileContains('config/payments.ts', '    woovi: gateways.woovi(')
    const output = ace.ui.logger
      .getLogs()
      .map(({ message }) => message)
      .join('\n')
    assert.include(output, 'yellow(npm i) standardwebhooks')
  }).timeout(60_000)

  test('without a terminal or --gateways Stripe is enabled, and the log names --gateways', async ({
    assert,
    fs,
  }) => {
    const command = await configure(fs)
    assert.equal(command.exitCode ?? 0, 0)
    await assert.fileContains('config/payments.ts', '    stripe: gateways.stripe({')
    assert.include(command.output, '--gateways=')
    assert.include(command.output, 'yellow(npm i) stripe')
  }).timeout(60_000)

  test('an unknown gateway exits 1 naming it and the valid names, and writes nothing', async ({
    assert,
    fs,
  }) => {
    const command = await configure(fs, ['--gateways=stripe,bitpay'])
    assert.equal(command.exitCode, 1)
    assert.include(command.output, '"bitpay"')
    assert.include(command.output, 'paddle')
    await assert.fileNotExists('config/payments.ts')
  }).timeout(60_000)
})
