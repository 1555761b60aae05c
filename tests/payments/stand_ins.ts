import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { getActiveTest } from '@japa/runner'

/** One JSON request the stand-in received */
export interface StandInRequest {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: any
}

/**
 * A gateway API on a loopback `node:http` server, closed when the test ends.
 * `answer` builds each response from the request the app sent.
 */
export async function gatewayStandIn(
  answer: (request: StandInRequest) => { status?: number; body: unknown }
) {
  const requests: StandInRequest[] = []
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    incoming.on('data', (chunk) => chunks.push(chunk))
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      let body: unknown = text
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {}
      const request = {
        method: incoming.method!,
        url: incoming.url!,
        headers: incoming.headers,
        body,
      }
      requests.push(request)
      const { status = 200, body: out } = answer(request)
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(out))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  getActiveTest()?.cleanup(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

/**
 * InfinitePay's public payment check (`POST /invoices/public/checkout/payment_check`)
 * as documented: `{ handle, order_nsu, transaction_nsu, slug }` in, `{ success,
 * paid, amount, paid_amount, installments, capture_method }` out. Only the
 * transactions registered with `pay()` (for that handle, order and slug) are paid.
 */
export async function infinitePayStandIn(handle: string) {
  const paid = new Map<
    string,
    { amount: number; paid_amount: number; order: string; slug: string }
  >()
  const standIn = await gatewayStandIn(({ method, url, body }) => {
    if (method !== 'POST' || url !== '/invoices/public/checkout/payment_check') {
      return { status: 404, body: { message: 'not found' } }
    }
    const payment = paid.get(String(body?.transaction_nsu))
    const matches =
      body?.handle === handle && payment?.order === body?.order_nsu && payment?.slug === body?.slug
    if (!payment || !matches) {
      return { body: { success: true, paid: false } }
    }
    return {
      body: {
        success: true,
        paid: true,
        amount: payment.amount,
        paid_amount: payment.paid_amount,
        installments: 1,
        capture_method: 'pix',
      },
    }
  })
  return {
    ...standIn,
    /** Records a payment InfinitePay really received */
    pay(
      transaction: string,
      payment: { order: string; slug: string; amount: number; paid_amount: number }
    ) {
      paid.set(transaction, payment)
    },
  }
}

/**
 * Mercado Pago's API as the driver reads it: `GET /v1/payments/:id`,
 * `/preapproval/:id` and `/v1/chargebacks/:id` with the bearer token, answering
 * the resources registered with `set()` and 404 otherwise.
 */
export async function mercadoPagoStandIn(accessToken: string) {
  const resources = new Map<string, unknown>()
  const standIn = await gatewayStandIn(({ method, url, headers }) => {
    if (headers.authorization !== `Bearer ${accessToken}`) {
      return { status: 401, body: { message: 'invalid_token' } }
    }
    const resource = method === 'GET' ? resources.get(url) : undefined
    return resource ? { body: resource } : { status: 404, body: { message: 'not_found' } }
  })
  return {
    ...standIn,
    /** Registers the current state of a resource at its API path */
    set(path: string, resource: unknown) {
      resources.set(path, resource)
    },
  }
}
