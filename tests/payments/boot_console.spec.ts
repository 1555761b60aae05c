import { test } from '@japa/runner'
import Configure from '@adonisjs/core/commands/configure'
import { IgnitorFactory } from '@adonisjs/core/factories'
import type { FileSystem } from '@japa/file-system'
import PaymentsWebhook from '../../commands/payments_webhook.ts'
import { gateways } from '../../src/payments/main.ts'
import { PACKAGE_ENTRY, databaseConfig, setupConsoleApp } from '../helpers.ts'
import { paymentsApp } from './helpers.ts'
import { loggedWarnings } from './logger_spy_provider.ts'

const MAIN = new URL('../../src/payments/main.ts', import.meta.url).href

/**
 * Runs the real `configure --features=payments` in a console app, then loads
 * the config it published (its two imports pointed at this checkout: the
 * app's env and `adonis-atrium/payments`).
 */
async function configuredPaymentsConfig(fs: FileSystem) {
  const ace = await setupConsoleApp(fs)
  const command = await ace.create(Configure, [
    PACKAGE_ENTRY,
    '--features=payments',
    '--no-install',
  ])
  await command.exec()
  const published = await fs.contents('config/payments.ts')
  await fs.create(
    'config/payments_loaded.ts',
    published
      .replace(
        `import env from '#start/env'`,
        'const env = { get: (key: string) => process.env[key] || undefined }'
      )
      .replace(`from 'adonis-atrium/payments'`, `from '${MAIN}'`)
  )
  const loaded = await import(new URL('config/payments_loaded.ts', fs.baseUrl).href)
  return loaded.default
}

/** An app of `environment` booted with the payments provider and `payments` as its config */
async function bootApp(fs: FileSystem, environment: 'console' | 'web', payments: unknown) {
  const ignitor = new IgnitorFactory()
    .withCoreProviders()
    .withCoreConfig()
    .merge({
      rcFileContents: {
        providers: [
          () => import('@adonisjs/lucid/database_provider'),
          () => import('./logger_spy_provider.ts'),
          () => import('../../providers/payments_provider.ts'),
        ],
      },
      config: { payments, database: databaseConfig(fs.basePath) },
    })
    .create(fs.baseUrl, { importer: (path) => import(path) })
  const app = ignitor.createApp(environment)
  await app.init()
  return app
}

test.group('Payments boot per environment', () => {
  test('right after configure, Ace commands boot and run; the web server refuses the unverified route', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const saved = process.env.STRIPE_WEBHOOK_SECRET
    delete process.env.STRIPE_WEBHOOK_SECRET
    cleanup(() => {
      if (saved !== undefined) process.env.STRIPE_WEBHOOK_SECRET = saved
    })
    const payments = await configuredPaymentsConfig(fs)

    const consoleApp = await bootApp(fs, 'console', payments)
    cleanup(() => consoleApp.terminate())
    loggedWarnings.length = 0
    await consoleApp.boot()
    await consoleApp.start(() => {})
    assert.deepEqual(loggedWarnings, [
      'Missing webhook credential for provider "stripe" (route POST /payments/webhook/stripe): set "providers.stripe" webhookSecret in config/payments.ts (env STRIPE_WEBHOOK_SECRET), or add "stripe" to allowUnverifiedWebhooks to accept unverified deliveries',
    ])
    const ace = await consoleApp.container.make('ace')
    ace.ui.switchMode('raw')
    const command = await ace.create(PaymentsWebhook, ['--url=https://shop.example'])
    await command.exec()
    const output = command.ui.logger
      .getLogs()
      .map((log: { message: string }) => log.message)
      .join('\n')
    assert.equal(command.exitCode ?? 0, 0, output)
    assert.include(output, 'https://shop.example/payments/webhook/stripe')
    assert.include(output, 'unconfigured')

    const webApp = await bootApp(fs, 'web', payments)
    cleanup(() => webApp.terminate())
    await assert.rejects(
      () => webApp.boot(),
      /Missing webhook credential for provider "stripe".*STRIPE_WEBHOOK_SECRET/
    )
  }).timeout(60_000)

  test('a configured gateway whose optional package is missing stops the server boot in one line', async ({
    assert,
  }) => {
    assert.deepEqual(gateways.stripe().packages, ['stripe'])
    const missing = { ...gateways.fake({ secret: 'x' }), packages: ['atrium-missing-sdk'] }
    await assert.rejects(
      () => paymentsApp({ config: { providers: { fake: missing } } }),
      'The "fake" gateway in config/payments.ts needs "atrium-missing-sdk", which is not installed. Run: npm install atrium-missing-sdk'
    )
  })

  test('in Ace commands a missing optional package is a warning, not a boot error', async ({
    assert,
    fs,
    cleanup,
  }) => {
    const { defineConfig } = await import(MAIN)
    const payments = defineConfig({
      providers: { fake: { ...gateways.fake({ secret: 'x' }), packages: ['atrium-missing-sdk'] } },
    })
    loggedWarnings.length = 0
    const consoleApp = await bootApp(fs, 'console', payments)
    cleanup(() => consoleApp.terminate())
    await consoleApp.boot()
    assert.isTrue(consoleApp.isBooted)
    assert.deepEqual(loggedWarnings, [
      'The "fake" gateway in config/payments.ts needs "atrium-missing-sdk", which is not installed. Run: npm install atrium-missing-sdk',
    ])
  })
})
