import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from '@japa/runner'
import PaymentsWebhook from '../../commands/payments_webhook.ts'
import PaymentsWebhooksReplay from '../../commands/payments_webhooks_replay.ts'
import MakeWebhookHandler from '../../commands/make_webhook_handler.ts'
import { gateways } from '../../src/payments/main.ts'
import { fakeEvent, paymentsApp } from './helpers.ts'

async function run(app: Awaited<ReturnType<typeof paymentsApp>>, command: any, argv: string[]) {
  const ace = await app.app.container.make('ace')
  ace.ui.switchMode('raw')
  const instance = await ace.create(command, argv)
  await instance.exec()
  const logs = instance.ui.logger.getLogs().map((log: { message: string }) => log.message)
  return { instance, output: logs.join('\n') }
}

/**
 * A loopback HTTP server that answers like Stripe's webhook endpoints API.
 */
async function fakeStripeApi() {
  const requests: { path: string; body: string; auth?: string }[] = []
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      requests.push({ path: request.url!, body, auth: request.headers.authorization })
      const form = new URLSearchParams(body)
      response.setHeader('content-type', 'application/json')
      response.end(
        JSON.stringify({
          id: 'we_test_1',
          object: 'webhook_endpoint',
          url: form.get('url'),

          secret: 'whsec_created_by_api',
          status: 'enabled',
        })
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, requests }
}

test.group('Payments commands', () => {
  test('payments:webhook prints each provider with its URL, verification and events', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const { output } = await run(app, PaymentsWebhook, ['--base-url=https://shop.example'])
    assert.include(output, 'https://shop.example/payments/webhook/stripe')
    assert.include(output, 'payment_intent.succeeded')
    assert.include(output, 'https://shop.example/payments/webhook/efi')
    assert.include(output, 'configured')
    assert.include(output, 'PAYMENT_RECEIVED')
  })

  test('payments:webhook uses the app HOST and PORT, and wraps the events column', async ({
    assert,
    cleanup,
  }) => {
    const saved = { APP_URL: process.env.APP_URL, HOST: process.env.HOST, PORT: process.env.PORT }
    cleanup(() => {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
      }
    })
    delete process.env.APP_URL
    process.env.HOST = '0.0.0.0'
    process.env.PORT = '3399'
    const app = await paymentsApp()
    const { output } = await run(app, PaymentsWebhook, [])
    assert.include(output, 'http://localhost:3399/payments/webhook/stripe')
    assert.notInclude(output, ':3333')
    assert.include(output, 'customer.subscription.deleted')
    const widest = Math.max(...output.split('\n').map((line: string) => line.length))
    assert.isAtMost(widest, 170, 'the events of a gateway wrap instead of widening the table')

    const flagged = await run(app, PaymentsWebhook, ['--url=https://pay.example/'])
    assert.include(flagged.output, 'https://pay.example/payments/webhook/stripe')
  })

  test('payments:webhook --create creates the Stripe endpoint through its API and echoes the secret', async ({
    assert,
    cleanup,
  }) => {
    const api = await fakeStripeApi()
    cleanup(() => new Promise<void>((resolve) => api.server.close(() => resolve())))
    const app = await paymentsApp({
      config: {
        providers: {
          stripe: gateways.stripe({
            webhookSecret: 'whsec_old',
            apiKey: 'sk_test_key',
            api: { host: '127.0.0.1', port: api.port, protocol: 'http' },
          }),
        },
      },
    })
    const { output, instance } = await run(app, PaymentsWebhook, [
      '--create',
      '--base-url=https://shop.example',
    ])
    assert.equal(instance.exitCode ?? 0, 0, output)
    assert.include(output, 'whsec_created_by_api')
    assert.lengthOf(api.requests, 1)
    assert.equal(api.requests[0].path, '/v1/webhook_endpoints')
    assert.equal(api.requests[0].auth, 'Bearer sk_test_key')
    const form = new URLSearchParams(api.requests[0].body)
    assert.equal(form.get('url'), 'https://shop.example/payments/webhook/stripe')
    const events = [...form.entries()]
      .filter(([key]) => key.startsWith('enabled_events'))
      .map(([, value]) => value)
    assert.include(events, 'charge.dispute.created')
  })

  test('payments:webhook --create refuses a gateway whose API cannot create endpoints', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const { instance, output } = await run(app, PaymentsWebhook, ['--create', '--provider=asaas'])
    assert.equal(instance.exitCode, 1)
    assert.include(output, '"asaas" is a asaas provider')
  })

  test('payments:webhooks:replay --failed re-runs stored failed events', async ({ assert }) => {
    let calls = 0
    const app = await paymentsApp({
      config: {
        billing: {
          handlers: {
            'payment.succeeded': () => {
              calls++
              if (calls === 1) throw new Error('temporary outage')
            },
          },
        },
      },
    })
    await app.deliver(
      'fake',
      fakeEvent('evt_rp', 'payment.succeeded', { paymentId: 'p', amount: 5 })
    )
    const { output } = await run(app, PaymentsWebhooksReplay, ['--failed'])
    assert.include(output, 'fake evt_rp (payment.succeeded): processed')
    assert.equal(calls, 2)
    const [row] = await app.rows('events')
    assert.equal(row.status, 'processed')
    const again = await run(app, PaymentsWebhooksReplay, ['--failed'])
    assert.include(again.output, 'No stored event matches')
  })

  test('payments:webhooks:replay --id re-runs a processed event only with --force, and says so', async ({
    assert,
  }) => {
    let calls = 0
    const app = await paymentsApp({
      config: { billing: { handlers: { 'payment.succeeded': () => void calls++ } } },
    })
    await app.deliver(
      'fake',
      fakeEvent('evt_one', 'payment.succeeded', { paymentId: 'p', amount: 5 })
    )
    const refused = await run(app, PaymentsWebhooksReplay, ['--id=evt_one', '--provider=fake'])
    assert.equal(calls, 1)
    assert.equal(refused.instance.exitCode, 1)
    assert.include(
      refused.output,
      'fake evt_one (payment.succeeded): skipped - already processed; pass --force to run its handler again'
    )

    const forced = await run(app, PaymentsWebhooksReplay, [
      '--id=evt_one',
      '--provider=fake',
      '--force',
    ])
    assert.equal(calls, 2)
    assert.equal(forced.instance.exitCode ?? 0, 0, forced.output)
    assert.include(forced.output, '--force: re-running events that were already processed')
    assert.include(forced.output, 'fake evt_one (payment.succeeded): processed')
  })

  test('make:webhook-handler scaffolds a typed handler class', async ({ assert, fs }) => {
    const app = await paymentsApp()
    await run(app, MakeWebhookHandler, ['payment.succeeded'])
    const contents = await fs.contents('app/payment_handlers/payment_succeeded.ts')
    assert.include(contents, "static eventType = 'payment.succeeded'")
    assert.include(contents, "handle(event: WebhookEventFor<'payment.succeeded'>)")
    assert.include(contents, 'export default class PaymentSucceededHandler')
  })
})
