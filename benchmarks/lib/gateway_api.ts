/**
 * The gateway APIs the benchmarked drivers read, on a loopback server in its
 * own process: InfinitePay's payment check (paid only when argv[2] is
 * `paid`) and Mercado Pago's payments (each id an approved payment, as
 * tests/payments/hmac_gateway_fixtures.ts describes it) and PayPal's signing
 * certificate (the PEM in PAYPAL_CERTIFICATE). Prints its URL, then serves
 * until killed.
 *
 * It speaks just enough HTTP/1.1 over `node:net` for the drivers' kept-alive
 * calls: a real gateway's API runs on other machines, so the less CPU this
 * stand-in takes from the two the app shares with it, the closer the route's
 * figure is to what the app itself costs.
 */
import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

const paid = process.argv[2] === 'paid'
const MAX_REQUEST_BYTES = 1024 * 1024

function answer(status: number, type: string, body: string) {
  const reason = status === 200 ? 'OK' : 'Not Found'
  return (
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: ${type}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: keep-alive\r\n\r\n${body}`
  )
}

const PAYMENT_CHECK = answer(
  200,
  'application/json',
  JSON.stringify(
    paid
      ? { success: true, paid: true, amount: 1000, paid_amount: 1010 }
      : { success: true, paid: false }
  )
)
const NOT_FOUND = answer(404, 'application/json', JSON.stringify({ message: 'not found' }))

function respond(url: string): string {
  if (url === '/invoices/public/checkout/payment_check') return PAYMENT_CHECK
  if (url.startsWith('/v1/payments/')) {
    const id = decodeURIComponent(url.slice('/v1/payments/'.length))
    return answer(
      200,
      'application/json',
      JSON.stringify({
        id,
        status: 'approved',
        transaction_amount: 129.9,
        currency_id: 'BRL',
        external_reference: `order-${id}`,
        date_last_updated: '2024-06-12T16:45:03.000-04:00',
      })
    )
  }
  if (url.startsWith('/v1/notifications/certs/') && process.env.PAYPAL_CERTIFICATE) {
    return answer(200, 'text/plain', process.env.PAYPAL_CERTIFICATE)
  }
  return NOT_FOUND
}

/** Answers each complete request in the socket's buffer, in order */
function serve(socket: Socket) {
  socket.on('error', () => socket.destroy())
  // a real API's server (nginx's tcp_nodelay, node:http) answers without Nagle's delay: a
  // kept-alive answer written while the previous one is unacknowledged would wait for an ACK
  socket.setNoDelay(true)
  let pending: Buffer = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk
    if (pending.length > MAX_REQUEST_BYTES) return socket.destroy()
    for (;;) {
      const headEnd = pending.indexOf('\r\n\r\n')
      if (headEnd === -1) return
      const head = pending.subarray(0, headEnd).toString('latin1')
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
      const end = headEnd + 4 + (length ? Number(length[1]) : 0)
      if (pending.length < end) return
      const url = head.slice(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1))
      socket.write(respond(url))
      pending = pending.subarray(end)
    }
  })
}

// the benchmark that started it is gone (even killed) once stdin closes: never outlive it
process.stdin.on('close', () => process.exit(0))
process.stdin.resume()

const server = createServer(serve)
server.on('error', (error) => {
  console.error(error)
  process.exit(1)
})
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
})
