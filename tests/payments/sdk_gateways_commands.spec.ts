import { test } from '@japa/runner'
import PaymentsWebhook from '../../commands/payments_webhook.ts'
import { gateways } from '../../src/payments/main.ts'
import { paymentsApp } from './helpers.ts'
import { gatewayStandIn, type StandInRequest } from './stand_ins.ts'

async function run(providers: Record<string, any>, argv: string[]) {
  const app = await paymentsApp({ config: { providers } })
  const ace = await app.app.container.make('ace')
  ace.ui.switchMode('raw')
  const instance = await ace.create(PaymentsWebhook, [...argv, '--base-url=https://shop.example'])
  await instance.exec()
  const output = instance.ui.logger
    .getLogs()
    .map((log: { message: string }) => log.message)
    .join('\n')
  return { exitCode: instance.exitCode ?? 0, output }
}

/** Each gateway's endpoints API on loopback, answering as its docs show */
const APIS: Record<
  string,
  {
    provider: (url: string) => any
    answer: (request: StandInRequest) => { status?: number; body: unknown }
    expect: { path: string; auth: string; printed: string; url: (body: any) => string }
  }
> = {
  paddle: {
    provider: (url) =>
      gateways.paddle({ webhookSecret: 'old', apiKey: 'pdl_key', apiBaseUrl: url }),
    answer: () => ({ body: { data: { id: 'ntfset_01', endpoint_secret_key: 'pdl_ntfset_NEW' } } }),
    expect: {
      path: '/notification-settings',
      auth: 'Bearer pdl_key',
      printed: 'PADDLE_WEBHOOK_SECRET=pdl_ntfset_NEW',
      url: (body) => body.destination,
    },
  },
  polar: {
    provider: (url) =>
      gateways.polar({ webhookSecret: 'old', accessToken: 'polar_oat', apiBaseUrl: url }),
    answer: () => ({ status: 201, body: { id: 'we_01', url: 'x', secret: 'polar_whs_NEW' } }),
    expect: {
      path: '/v1/webhooks/endpoints',
      auth: 'Bearer polar_oat',
      printed: 'POLAR_WEBHOOK_SECRET=polar_whs_NEW',
      url: (body) => body.url,
    },
  },
  dodopayments: {
    provider: (url) =>
      gateways.dodopayments({ webhookSecret: 'whsec_b2xk', apiKey: 'dodo_key', apiBaseUrl: url }),
    answer: ({ url }) =>
      url === '/webhooks/wh_01/secret'
        ? { body: { secret: 'whsec_NEW' } }
        : { body: { id: 'wh_01', url: 'x' } },
    expect: {
      path: '/webhooks',
      auth: 'Bearer dodo_key',
      printed: 'DODO_PAYMENTS_WEBHOOK_KEY=whsec_NEW',
      url: (body) => body.url,
    },
  },
  paypal: {
    provider: (url) =>
      gateways.paypal({
        webhookId: 'old',
        clientId: 'id',
        clientSecret: 'secret',
        apiBaseUrl: url,
      }),
    answer: ({ url }) =>
      url === '/v1/oauth2/token'
        ? { body: { access_token: 'A21', expires_in: 3600 } }
        : { status: 201, body: { id: '8PT597110X687430LKGECATA', url: 'x' } },
    expect: {
      path: '/v1/notifications/webhooks',
      auth: 'Bearer A21',
      printed: 'PAYPAL_WEBHOOK_ID=8PT597110X687430LKGECATA',
      url: (body) => body.url,
    },
  },
  mollie: {
    provider: (url) => gateways.mollie({ apiKey: 'test_mollie', apiEndpoint: `${url}/v2/` }),
    answer: () => ({
      status: 201,
      body: { resource: 'webhook', id: 'hook_01', webhookSecret: 'mollie_NEW' },
    }),
    expect: {
      path: '/v2/webhooks',
      auth: 'Bearer test_mollie',
      printed: 'MOLLIE_WEBHOOK_SECRET=mollie_NEW',
      url: (body) => body.url,
    },
  },
}

test.group('payments:webhook --create: Paddle, Polar, Dodo Payments, PayPal, Mollie', () => {
  for (const [gateway, api] of Object.entries(APIS)) {
    test(`${gateway}: creates the endpoint through its API and prints what verifies it`, async ({
      assert,
    }) => {
      const standIn = await gatewayStandIn(api.answer)
      const { exitCode, output } = await run({ [gateway]: api.provider(standIn.url) }, [
        '--create',
        `--provider=${gateway}`,
      ])
      assert.equal(exitCode, 0, output)
      assert.include(output, api.expect.printed)
      const create = standIn.requests.find((r) => r.method === 'POST' && r.url === api.expect.path)!
      assert.exists(create, JSON.stringify(standIn.requests.map((r) => r.url)))
      assert.equal(create.headers.authorization, api.expect.auth)
      assert.equal(api.expect.url(create.body), `https://shop.example/payments/webhook/${gateway}`)
    })
  }

  test('a missing API credential is reported naming the option and its env variable', async ({
    assert,
  }) => {
    const { exitCode, output } = await run({ polar: gateways.polar({ webhookSecret: 's' }) }, [
      '--create',
      '--provider=polar',
    ])
    assert.equal(exitCode, 1)
    assert.include(output, 'accessToken')
    assert.include(output, 'POLAR_ACCESS_TOKEN')
  })

  test('an API error is reported with the gateway and status, and nothing is printed as a secret', async ({
    assert,
  }) => {
    const standIn = await gatewayStandIn(() => ({
      status: 403,
      body: {
        error: { type: 'request_error', detail: 'You aren’t permitted to perform this request.' },
      },
    }))
    const { exitCode, output } = await run(
      {
        paddle: gateways.paddle({
          webhookSecret: 'old',
          apiKey: 'pdl_key',
          apiBaseUrl: standIn.url,
        }),
      },
      ['--create', '--provider=paddle']
    )
    assert.equal(exitCode, 1)
    assert.include(output, 'Paddle answered 403')
    assert.notInclude(output, 'PADDLE_WEBHOOK_SECRET=')
  })

  test('a gateway without such an API is refused, naming where to create its webhook', async ({
    assert,
  }) => {
    const { exitCode, output } = await run({ adyen: gateways.adyen({ hmacKey: 'AA' }) }, [
      '--create',
      '--provider=adyen',
    ])
    assert.equal(exitCode, 1)
    assert.include(output, 'Adyen Customer Area: Developers → Webhooks')
  })
})
