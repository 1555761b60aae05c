/**
 * A bounded HTTP load generator, run as a child process so it does not share
 * the server's event loop: `concurrency` workers on keep-alive sockets send
 * `requests` POSTs in all, then print one JSON line of results.
 *
 * Input (argv[2], JSON): { url, concurrency, requests, bodies: 'stripe' | 'same' | 'gateway',
 * secret?, body?, gateway?, credentials? }; it prints its own CPU time over the
 * measured window as `cpuMicros`.
 */
import { Agent, request } from 'node:http'
import { createHmac } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { signedWebhook, type SigningCredentials } from '../../src/payments/testing.ts'
import { gatewayFixture } from './gateway_fixtures.ts'

interface Plan {
  url: string
  concurrency: number
  requests: number
  /**
   * `stripe`: a new signed Stripe event per request; `same`: one fixed body and
   * headers; `gateway`: a new delivery of `gateway`'s fixture per request, signed
   * with `credentials`
   */
  bodies: 'stripe' | 'same' | 'gateway'
  gateway?: string
  credentials?: SigningCredentials
  secret?: string
  body?: string
  headers?: Record<string, string>
  prefix?: string
}

const plan: Plan = JSON.parse(process.argv[2])
const agent = new Agent({ keepAlive: true, maxSockets: plan.concurrency })
const target = new URL(plan.url)

function stripeDelivery(index: number) {
  const body = JSON.stringify({
    id: `evt_${plan.prefix ?? 'b'}_${index}`,
    object: 'event',
    type: 'payment_intent.succeeded',
    created: 1_700_000_000,
    data: {
      object: {
        id: `pi_${plan.prefix ?? 'b'}_${index}`,
        object: 'payment_intent',
        amount: 2590,
        amount_received: 2590,
        currency: 'brl',
        metadata: { externalReference: `order-${index}` },
      },
    },
  })
  const timestamp = Math.floor(Date.now() / 1000)
  const signature = createHmac('sha256', plan.secret!).update(`${timestamp}.${body}`).digest('hex')
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': `t=${timestamp},v1=${signature}`,
    },
    query: '',
  }
}

function gatewayDelivery(index: number) {
  const fixture = gatewayFixture(plan.gateway!)
  const signed = signedWebhook(
    fixture.name,
    fixture.payload(`${plan.prefix ?? 'b'}${index}`),
    plan.credentials ?? {}
  )
  const query = signed.query ? `?${new URLSearchParams(signed.query)}` : ''
  return { body: signed.body, headers: signed.headers, query }
}

function send(body: string, headers: Record<string, string>, query = '') {
  return new Promise<number>((resolve, reject) => {
    const req = request(
      {
        agent,
        method: 'POST',
        hostname: target.hostname,
        port: target.port,
        path: target.pathname + query,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}

// Prepare every body first so signing never sits inside the measured window
const deliveries = Array.from({ length: plan.requests }, (_, index) =>
  plan.bodies === 'stripe'
    ? stripeDelivery(index)
    : plan.bodies === 'gateway'
      ? gatewayDelivery(index)
      : { body: plan.body!, headers: plan.headers!, query: '' }
)
const latencies: number[] = []
const statuses: Record<number, number> = {}
let next = 0
const cpuAtStart = process.cpuUsage()
const started = performance.now()
await Promise.all(
  Array.from({ length: plan.concurrency }, async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]
      const begin = performance.now()
      const status = await send(delivery.body, delivery.headers, delivery.query)
      latencies.push(performance.now() - begin)
      statuses[status] = (statuses[status] ?? 0) + 1
    }
  })
)
const elapsed = performance.now() - started
const { user, system } = process.cpuUsage(cpuAtStart)
agent.destroy()
process.stdout.write(
  JSON.stringify({ elapsed, latencies, statuses, cpuMicros: user + system }) + '\n'
)
