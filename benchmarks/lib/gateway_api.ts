/**
 * The gateway APIs the benchmarked drivers read, on a loopback server in its
 * own process: InfinitePay's payment check (paid only when argv[2] is
 * `paid`) and Mercado Pago's payments (each id an approved payment, as
 * tests/payments/fixtures_a.ts describes it) and PayPal's signing
 * certificate (the PEM in PAYPAL_CERTIFICATE). Prints its URL, then serves
 * until killed.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const paid = process.argv[2] === 'paid'

const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => {
    const url = request.url ?? ''
    let body: unknown = { message: 'not found' }
    let status = 404
    if (url.startsWith('/v1/notifications/certs/') && process.env.PAYPAL_CERTIFICATE) {
      response.writeHead(200, { 'content-type': 'text/plain' })
      response.end(process.env.PAYPAL_CERTIFICATE)
      return
    }
    if (url === '/invoices/public/checkout/payment_check') {
      status = 200
      body = paid
        ? { success: true, paid: true, amount: 1000, paid_amount: 1010 }
        : { success: true, paid: false }
    } else if (url.startsWith('/v1/payments/')) {
      const id = decodeURIComponent(url.slice('/v1/payments/'.length))
      status = 200
      body = {
        id,
        status: 'approved',
        transaction_amount: 129.9,
        currency_id: 'BRL',
        external_reference: `order-${id}`,
        date_last_updated: '2024-06-12T16:45:03.000-04:00',
      }
    }
    response.writeHead(status, { 'content-type': 'application/json' })
    response.end(JSON.stringify(body))
  })
})
server.on('error', (error) => {
  console.error(error)
  process.exit(1)
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
})
