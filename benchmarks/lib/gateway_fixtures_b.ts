/**
 * Benchmark and fuzz fixtures for Paddle, Polar, Dodo Payments, PayPal and
 * Mollie: each gateway's `gateways.<name>()` options, the credentials that
 * sign for it (`signedWebhook(name, event, credentials)`), and a
 * payment.succeeded-like event. PayPal's certificate is served from a
 * loopback host for the run, so the fixtures are built by a function.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  PAYPAL_TEST_CERTIFICATE_ORIGIN,
  type SigningCredentials,
} from '../../src/payments/testing.ts'
import { makeCertificate } from '../../tests/payments/stand_ins_b.ts'
import { dodo, mollie, paddle, paypal, polar, SECRETS } from '../../tests/payments/fixtures_b.ts'

export interface GatewayFixtureB {
  name: string
  /** `gateways.<name>()` options */
  options: Record<PropertyKey, unknown>
  credentials: SigningCredentials
  /** A payment.succeeded-like payload; `key` makes its ids unique */
  event: (key: string) => unknown
}

/**
 * The five fixtures and `close()` for the loopback PayPal certificate host.
 * Mollie is benchmarked through its signed (next-gen) webhook: the classic one
 * calls Mollie's API on every delivery.
 */
export async function gatewayFixturesB() {
  const { privateKey, certificate } = makeCertificate()
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' })
    response.end(certificate)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const fixtures: GatewayFixtureB[] = [
    {
      name: 'paddle',
      options: { webhookSecret: SECRETS.paddle },
      credentials: { webhookSecret: SECRETS.paddle },
      event: (key) => paddle.transaction(key),
    },
    {
      name: 'polar',
      options: { webhookSecret: SECRETS.polar },
      credentials: { webhookSecret: SECRETS.polar },
      event: (key) => polar.order(key),
    },
    {
      name: 'dodopayments',
      options: { webhookSecret: SECRETS.dodopayments },
      credentials: { webhookSecret: SECRETS.dodopayments },
      event: (key) => dodo.payment(key),
    },
    {
      name: 'paypal',
      options: { webhookId: SECRETS.paypalWebhookId, [PAYPAL_TEST_CERTIFICATE_ORIGIN]: origin },
      credentials: {
        privateKey,
        certUrl: `${origin}/v1/notifications/certs/CERT-bench`,
        webhookId: SECRETS.paypalWebhookId,
      },
      event: (key) => paypal.capture(key),
    },
    {
      name: 'mollie',
      options: { webhookSecret: SECRETS.mollie },
      credentials: { webhookSecret: SECRETS.mollie },
      event: (key) => mollie.linkPaid(key),
    },
  ]
  return {
    fixtures,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
