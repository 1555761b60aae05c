import { test } from '@japa/runner'
import { defineConfig, gateways } from '../../src/payments/main.ts'
import { fakeEvent, paymentsApp, statusOf } from './helpers.ts'

const HANDLER_CLASS = (type: string) => `
export default class Handler {
  static eventType = '${type}'
  async handle(event) {
    ;(globalThis.__paymentsSeen ??= []).push([this.constructor.name, event.id, event.type])
  }
}
`

test.group('Payments boot', (group) => {
  group.each.setup(() => {
    ;(globalThis as any).__paymentsSeen = []
  })

  test('a provider that can verify but has no credential stops the boot, naming provider, route and fix', async ({
    assert,
  }) => {
    await assert.rejects(
      () =>
        paymentsApp({
          config: { providers: { stripe: gateways.stripe({ webhookSecret: undefined }) } },
        }),
      'Missing webhook credential for provider "stripe" (route POST /payments/webhook/stripe): set "providers.stripe" webhookSecret in config/payments.ts (env STRIPE_WEBHOOK_SECRET), or add "stripe" to allowUnverifiedWebhooks to accept unverified deliveries'
    )
  })

  test('allowUnverifiedWebhooks lets it boot; deliveries are still rejected until a credential is set', async ({
    assert,
  }) => {
    const app = await paymentsApp({
      config: {
        providers: { asaas: gateways.asaas({}), efi: gateways.efi() },
        allowUnverifiedWebhooks: ['asaas', 'efi'],
      },
    })
    const response = await app.post('asaas', {
      body: '{}',
      headers: { 'content-type': 'application/json', 'asaas-access-token': 'x' },
    })
    assert.equal(response.status, 400)
    assert.deepEqual((await response.json()) as any, {
      errors: [
        { code: 'E_WEBHOOK_REJECTED', message: 'asaas has no webhookToken', provider: 'asaas' },
      ],
    })
  })

  test('what each gateway can verify is known from its options', ({ assert }) => {
    assert.equal(gateways.efi().webhookVerification, 'unsupported')
    assert.equal(gateways.efi({ webhookHmac: 'h' }).webhookVerification, 'configured')
    assert.equal(gateways.infinitepay().webhookVerification, 'unconfigured')
    assert.equal(gateways.infinitepay({ handle: 'shop' }).webhookVerification, 'configured')
    assert.equal(gateways.stripe({ webhookSecret: 'whsec' }).webhookVerification, 'configured')
    assert.equal(gateways.abacatepay({ webhookSecret: 'x' }).webhookVerification, 'unconfigured')
  })

  test('every driver reports the verification state its descriptor announced at boot', async ({
    assert,
  }) => {
    const { generateKeyPairSync } = await import('node:crypto')
    const ec = generateKeyPairSync('ec', {
      namedCurve: 'prime256v1',
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    }).publicKey
    const rsa = generateKeyPairSync('rsa', {
      modulusLength: 1024,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    }).publicKey
    const cases: [keyof typeof gateways, Record<string, string>][] = [
      ['stripe', {}],
      ['stripe', { webhookSecret: 'whsec' }],
      ['abacatepay', { webhookSecret: 'x' }],
      ['abacatepay', { webhookSecret: 'x', publicKey: 'k' }],
      ['asaas', {}],
      ['asaas', { webhookToken: 't' }],
      ['woovi', {}],
      ['woovi', { webhookSecret: 's' }],
      ['woovi', { webhookPublicKey: rsa }],
      ['pagbank', {}],
      ['pagbank', { token: 't' }],
      ['pagbank', { publicKey: ec }],
      ['adyen', {}],
      ['adyen', { hmacKey: 'AB12' }],
      ['efi', {}],
      ['efi', { webhookHmac: 'h' }],
      ['infinitepay', {}],
      ['infinitepay', { handle: 'shop' }],
      ['fake', {}],
      ['fake', { secret: 's' }],
    ]
    for (const [name, options] of cases) {
      const descriptor = (gateways[name] as (options: object) => any)(options)
      const driver = await descriptor.resolver()
      assert.equal(
        driver.webhookVerification,
        descriptor.webhookVerification,
        `${name} ${JSON.stringify(Object.keys(options))}`
      )
    }
  })

  test('a handler for an unknown type inside the library namespace stops the boot', async ({
    assert,
  }) => {
    await assert.rejects(
      () => paymentsApp({ config: { billing: { handlers: { 'payment.captured': () => {} } } } }),
      /Unknown webhook event type "payment.captured" in billing.handlers\["payment.captured"\].*billing.passthroughEvents/
    )
  })

  test('a dotted passthrough declared in billing.passthroughEvents may have a handler', async ({
    assert,
    fs,
  }) => {
    await fs.create('app/payment_handlers/captured.ts', HANDLER_CLASS('payment.captured'))
    const app = await paymentsApp({
      config: { billing: { passthroughEvents: ['payment.captured'] } },
    })
    const response = await app.deliver('fake', fakeEvent('evt_cap', 'payment.captured', {}))
    assert.equal(response.status, 200)
    assert.deepEqual((globalThis as any).__paymentsSeen, [
      ['Handler', 'evt_cap', 'payment.captured'],
    ])
  })

  test('two handlers claiming one type stop the boot, naming both', async ({ assert, fs }) => {
    await fs.create('app/payment_handlers/a_succeeded.ts', HANDLER_CLASS('payment.succeeded'))
    await fs.create('app/payment_handlers/b_succeeded.ts', HANDLER_CLASS('payment.succeeded'))
    await assert.rejects(
      () => paymentsApp(),
      'Two webhook handlers claim "payment.succeeded": app/payment_handlers/a_succeeded.ts and app/payment_handlers/b_succeeded.ts. Keep one of them'
    )
  })

  test('a config handler and a folder handler for one type are refused too', async ({
    assert,
    fs,
  }) => {
    await fs.create('app/payment_handlers/succeeded.ts', HANDLER_CLASS('payment.succeeded'))
    await assert.rejects(
      () => paymentsApp({ config: { billing: { handlers: { 'payment.succeeded': () => {} } } } }),
      /billing.handlers\["payment.succeeded"\] \(config\/payments.ts\) and app\/payment_handlers\/succeeded.ts/
    )
  })

  test('handler classes in app/payment_handlers are resolved through the container and run', async ({
    assert,
    fs,
  }) => {
    await fs.create('app/payment_handlers/payment_succeeded.ts', HANDLER_CLASS('payment.succeeded'))
    const app = await paymentsApp()
    await app.deliver(
      'fake',
      fakeEvent('evt_h', 'payment.succeeded', { paymentId: 'p', amount: 1 })
    )
    assert.deepEqual((globalThis as any).__paymentsSeen, [
      ['Handler', 'evt_h', 'payment.succeeded'],
    ])
  })

  test('a billing table missing a column of the published migrations fails naming migration:run, never altered', async ({
    assert,
  }) => {
    const app = await paymentsApp()
    const schema = () => app.db.connection().schema
    await schema().alterTable('billing_payments', (table) => {
      table.dropIndex(['external_reference'], 'billing_payments_external_reference_index')
    })
    await schema().alterTable('billing_payments', (table) => table.dropColumn('external_reference'))
    const { LucidWebhookStore } = await import('../../src/payments/store.ts')
    const store = new LucidWebhookStore(app.db)
    await assert.rejects(
      () => store.ensureSchema(),
      /billing_payments\.external_reference.*node ace migration:run/
    )
    await assert.rejects(
      () => store.findPaymentByExternalReference('old'),
      /node ace migration:run/
    )
    assert.isFalse(await schema().hasColumn('billing_payments', 'external_reference'))
  })

  test('routes.enabled false mounts nothing until the app calls registerRoutes()', async ({
    assert,
  }) => {
    const { registerRoutes } = await import('../../src/payments/main.ts')
    const app = await paymentsApp({
      config: { routes: { enabled: false } },
      routes: (router) => {
        router.group(() => registerRoutes(router)).prefix('/hooks')
      },
    })
    const event = fakeEvent('evt_r', 'payment.succeeded', { paymentId: 'p', amount: 1 })
    assert.equal(await statusOf(app.deliver('fake', event)), 404)
    const { signedWebhook } = await import('../../src/payments/testing.ts')
    const signed = signedWebhook('fake', event, { webhookSecret: 'fake-secret' })
    const response = await fetch(`${app.url}/hooks/payments/webhook/fake`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    })
    assert.equal(response.status, 200)
  })

  test('services/payments exports the booted atrium.payments binding', async ({ assert }) => {
    const app = await paymentsApp()
    const { default: payments } = await import('../../services/payments.ts')
    assert.strictEqual(payments, await app.app.container.make('atrium.payments'))
    assert.isFunction(payments.replay)
  })

  test('defineConfig names the option and the fix', ({ assert }) => {
    assert.throws(() => defineConfig({} as any), /Missing "providers" in config\/payments.ts/)
    assert.throws(
      () => defineConfig({ providers: { 'Bad Name': gateways.efi() } }),
      /Invalid provider name "Bad Name"/
    )
  })
})
