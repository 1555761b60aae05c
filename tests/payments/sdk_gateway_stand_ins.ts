import { execFileSync } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { getActiveTest } from '@japa/runner'
import type { StandInRequest } from './stand_ins.ts'

/**
 * A self-signed RSA certificate and its key, made by `openssl` as PayPal's
 * signing certificate would be (its CN is the one PayPal's certificates carry).
 */
export function makeCertificate(
  days = 2,
  commonName = 'messageverificationcerts.paypal.com',
  keyType = 'rsa:2048'
) {
  const out = execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      keyType,
      '-nodes',
      '-keyout',
      '-',
      '-out',
      '-',
      '-subj',
      `/CN=${commonName}`,
      '-days',
      String(days),
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] }
  ).toString()
  const privateKey = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n/.exec(out)![0]
  const certificate = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n/.exec(out)![0]
  return { privateKey, certificate }
}

/**
 * PayPal's certificate host on loopback: `GET /v1/notifications/certs/<name>`
 * answers the PEM registered under that name; `hits` counts the fetches.
 */
export async function paypalCertificateHost() {
  const certificates = new Map<string, string>()
  const hits: string[] = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    hits.push(request.url!)
    const body = certificates.get(request.url!)
    response.writeHead(body ? 200 : 404, { 'content-type': 'text/plain' })
    response.end(body ?? 'not found')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  getActiveTest()?.cleanup(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  )
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    hits,
    /** Serves `pem` and returns its URL */
    serve(name: string, pem: string) {
      certificates.set(`/v1/notifications/certs/${name}`, pem)
      return `${origin}/v1/notifications/certs/${name}`
    },
  }
}

/** The loopback certificate the HTTPS stand-ins serve */
const LOOPBACK_TLS = makeCertificate(2, '127.0.0.1')

/**
 * A gateway API on a loopback HTTPS server, for SDKs that refuse plain HTTP
 * (`@mollie/api-client`). Its certificate is self-signed, so the test that
 * uses it lets TLS accept unknown certificates for its own duration only.
 */
export async function httpsStandIn(
  answer: (request: StandInRequest) => { status?: number; body: unknown }
) {
  const requests: StandInRequest[] = []
  const server = createHttpsServer(
    { key: LOOPBACK_TLS.privateKey, cert: LOOPBACK_TLS.certificate },
    (incoming, response) => {
      const chunks: Buffer[] = []
      incoming.on('data', (chunk) => chunks.push(chunk))
      incoming.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        const request = {
          method: incoming.method!,
          url: incoming.url!,
          headers: incoming.headers,
          body: text ? safeJson(text) : undefined,
        }
        requests.push(request)
        const { status = 200, body } = answer(request)
        response.writeHead(status, { 'content-type': 'application/hal+json' })
        response.end(JSON.stringify(body))
      })
    }
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const previous = process.env.NODE_TLS_REJECT_UNAUTHORIZED
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'
  getActiveTest()?.cleanup(
    () =>
      new Promise<void>((resolve) => {
        if (previous === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED
        else process.env.NODE_TLS_REJECT_UNAUTHORIZED = previous
        server.close(() => resolve())
        server.closeAllConnections()
      })
  )
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * Mollie's Payments API (`GET /v2/payments/:id`) answering the payments
 * registered with `set()` as Mollie's API spells them; others are a 404.
 */
export async function mollieStandIn(apiKey: string) {
  const payments = new Map<string, Record<string, unknown>>()
  const standIn = await httpsStandIn(({ method, url, headers }) => {
    const match = /^\/v2\/payments\/([^/?]+)/.exec(url)
    if (headers.authorization !== `Bearer ${apiKey}`) {
      return { status: 401, body: { status: 401, title: 'Unauthorized Request' } }
    }
    const payment = match && method === 'GET' ? payments.get(match[1]) : undefined
    if (!payment) {
      return { status: 404, body: { status: 404, title: 'Not Found', detail: 'No payment exists' } }
    }
    return { body: { resource: 'payment', mode: 'test', ...payment } }
  })
  return {
    ...standIn,
    apiEndpoint: `${standIn.url}/v2/`,
    set(payment: Record<string, unknown> & { id: string }) {
      payments.set(payment.id, payment)
    },
  }
}
