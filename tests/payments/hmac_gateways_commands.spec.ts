import { test } from '@japa/runner'
import PaymentsWebhook from '../../commands/payments_webhook.ts'
import { gateways } from '../../src/payments/main.ts'
import { CREDENTIALS, paymentsApp } from './helpers.ts'
import { gatewayStandIn } from './stand_ins.ts'

async function run(app: Awaited<ReturnType<typeof paymentsApp>>, argv: string[]) {
  const ace = await app.app.container.make('ace')
  ace.ui.switchMode('raw')
  const instance = await ace.create(PaymentsWebhook, argv)
  await instance.exec()
  const logs = instance.ui.logger.getLogs().map((log: { message: string }) => log.message)
  return { instance, output: logs.join('\n') }
}

test.group('Payments commands: --create for Square and Lemon Squeezy', () => {
  test('square: creates the subscription through the SDK and prints the signature key', async ({
    assert,
  }) => {
    // Square's CreateWebhookSubscription, as its API answers it
    const api = await gatewayStandIn(({ body }) => ({
      body: {
        subscription: {
          id: 'wbhk_b35f6b3145074cf9ad513610786c19d5',
          name: body?.subscription?.name,
          enabled: true,
          event_types: body?.subscription?.event_types,
          notification_url: body?.subscription?.notification_url,
          api_version: '2025-01-23',
          signature_key: 'sq-created-signature-key',
          created_at: '2024-06-12 19:45:03 +0000 UTC',
          updated_at: '2024-06-12 19:45:03 +0000 UTC',
        },
      },
    }))
    const app = await paymentsApp({
      config: {
        providers: {
          square: gateways.square({
            ...CREDENTIALS.square,
            accessToken: 'EAAA-test-token',
            apiBaseUrl: api.url,
          }),
        },
      },
    })
    const { instance, output } = await run(app, [
      '--create',
      '--provider=square',
      '--base-url=https://shop.example',
    ])
    assert.equal(instance.exitCode ?? 0, 0, output)
    assert.include(output, 'Signature key: sq-created-signature-key')
    assert.include(output, 'SQUARE_WEBHOOK_URL')
    assert.lengthOf(api.requests, 1)
    const [request] = api.requests
    assert.equal(request.method, 'POST')
    assert.equal(request.url, '/v2/webhooks/subscriptions')
    assert.equal(request.headers.authorization, 'Bearer EAAA-test-token')
    assert.isString(request.body.idempotency_key)
    assert.equal(
      request.body.subscription.notification_url,
      'https://shop.example/payments/webhook/square'
    )
    assert.include(request.body.subscription.event_types, 'dispute.created')
  }).timeout(60_000)

  test('lemonsqueezy: creates the webhook with a generated secret, printed once', async ({
    assert,
  }) => {
    const api = await gatewayStandIn(({ body }) => ({
      status: 201,
      body: {
        data: {
          type: 'webhooks',
          id: '77',
          attributes: { url: body?.data?.attributes?.url, events: body?.data?.attributes?.events },
        },
      },
    }))
    const app = await paymentsApp({
      config: {
        providers: {
          lemonsqueezy: gateways.lemonsqueezy({
            signingSecret: 'old',
            apiKey: 'ls-api-key',
            storeId: '12',
            apiBaseUrl: api.url,
          }),
        },
      },
    })
    const { instance, output } = await run(app, [
      '--create',
      '--provider=lemonsqueezy',
      '--base-url=https://shop.example',
    ])
    assert.equal(instance.exitCode ?? 0, 0, output)
    const [request] = api.requests
    assert.equal(request.url, '/v1/webhooks')
    assert.equal(request.headers.authorization, 'Bearer ls-api-key')
    assert.equal(request.body.data.relationships.store.data.id, '12')
    const secret = request.body.data.attributes.secret
    assert.match(secret, /^[0-9a-f]{40}$/)
    assert.include(output, `Signing secret: ${secret}`)
    assert.include(request.body.data.attributes.events, 'order_refunded')
  })

  test('a missing API credential, an API error, and a gateway without such an API are each one message', async ({
    assert,
  }) => {
    const api = await gatewayStandIn(() => ({
      status: 422,
      body: { errors: [{ detail: 'The url field must be a valid URL.' }] },
    }))
    const app = await paymentsApp({
      config: {
        providers: {
          square: gateways.square(CREDENTIALS.square),
          lemonsqueezy: gateways.lemonsqueezy({ apiKey: 'k', storeId: '1', apiBaseUrl: api.url }),
          mercadopago: gateways.mercadopago(CREDENTIALS.mercadopago),
        },
        allowUnverifiedWebhooks: ['lemonsqueezy'],
      },
    })
    const square = await run(app, ['--create', '--provider=square'])
    assert.equal(square.instance.exitCode, 1)
    assert.include(square.output, 'Set SQUARE_ACCESS_TOKEN')
    const lemon = await run(app, ['--create', '--provider=lemonsqueezy'])
    assert.equal(lemon.instance.exitCode, 1)
    assert.include(lemon.output, 'Lemon Squeezy answered 422 The url field must be a valid URL.')
    const mercadopago = await run(app, ['--create', '--provider=mercadopago'])
    assert.equal(mercadopago.instance.exitCode, 1)
    assert.include(mercadopago.output, 'Your integrations > your application > Webhooks')
  })
})
