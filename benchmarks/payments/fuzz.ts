/**
 * `BENCH_FUZZ` (default 10,000) seeded random, truncated, re-signed-with-the-
 * wrong-key and header-mangled deliveries, spread over every gateway route of
 * benchmarks/lib/gateway_fixtures.ts, on each database: how many were
 * accepted, answered 5xx, and left a ledger row (all must be 0). The cases
 * are those of the hostile test (tests/hostile/payments_fuzz_cases.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'node:http'
import type { Dialect } from '../../tests/helpers.ts'
import { fuzzCase, prng, type FuzzCase } from '../../tests/hostile/payments_fuzz_cases.ts'
import { appConnection, bootPaymentsBench } from '../lib/payments_app.ts'
import { GATEWAY_FIXTURES, fixtureProviders, gatewayApiStandIn } from '../lib/gateway_fixtures.ts'
import { printTable } from '../lib/report.ts'

const CASES = Number(process.env.BENCH_FUZZ ?? 10_000)
const dialects = (process.env.BENCH_DB ?? 'sqlite,pg').split(',') as Dialect[]
const CONCURRENCY = 8

/** The fuzzer's view of every gateway, signing against the API stand-in at `api` */
const gatewaysAt = (api: string) =>
  GATEWAY_FIXTURES.map((fixture) => ({
    name: fixture.name,
    payload: fixture.payload,
    credentials: fixture.credentials(api),
    wrongCredentials: fixture.wrongCredentials(api),
  }))

function send(agent: Agent, base: URL, job: FuzzCase) {
  const search = job.query ? `?${new URLSearchParams(job.query)}` : ''
  const body = typeof job.body === 'string' ? Buffer.from(job.body) : job.body
  return new Promise<number>((resolve, reject) => {
    const outgoing = request(
      {
        agent,
        method: 'POST',
        hostname: base.hostname,
        port: base.port,
        path: `/payments/webhook/${job.provider}${search}`,
        headers: { ...job.headers, 'content-length': body.length },
      },
      (response) => {
        response.resume()
        response.on('end', () => resolve(response.statusCode ?? 0))
      }
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

const rows: Record<string, string | number>[] = []
for (const which of dialects) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-fuzz-'))
  // InfinitePay's stand-in confirms nothing: no fuzzed delivery is a real payment
  const api = await gatewayApiStandIn({ paid: false })
  const gateways = gatewaysAt(api.url)
  let runs = 0
  const { db, server, close } = await bootPaymentsBench({
    which,
    directory,
    connection: appConnection(which, directory),
    providers: fixtureProviders(api.url),
    handlers: { 'payment.succeeded': () => void runs++ },
  })

  const random = prng(20_240_612)
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const base = new URL(server.url)
  const statuses = new Map<number, number>()
  const perGateway = new Map<string, number>()
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CASES) {
        const index = next++
        const job = fuzzCase(gateways[index % gateways.length], random)
        const status = await send(agent, base, job)
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
        if (status < 400) perGateway.set(job.provider, (perGateway.get(job.provider) ?? 0) + 1)
      }
    })
  )
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  const count = async (table: string) => {
    const [{ count: total }] = await db.from(table).count('* as count')
    return Number(total)
  }
  const sum = (test: (status: number) => boolean) =>
    [...statuses].filter(([status]) => test(status)).reduce((total, [, n]) => total + n, 0)
  rows.push({
    'db': which,
    'deliveries': CASES,
    'routes': gateways.length,
    'statuses': [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}x${n}`)
      .join(' '),
    'accepted (0)': sum((status) => status < 400),
    '5xx (0)': sum((status) => status >= 500),
    'ledger rows (0)': await count('billing_webhook_events'),
    'payment rows (0)': await count('billing_payments'),
    'handler runs (0)': runs,
    'accepted by': [...perGateway].map(([name, n]) => `${name}x${n}`).join(' ') || '-',
    'deliveries/s': Math.round(CASES / seconds),
  })
  await close()
  await api.close()
  await rm(directory, { recursive: true, force: true })
}

printTable(
  `Fuzzed deliveries over every gateway route (${GATEWAY_FIXTURES.map(({ name }) => name).join(', ')}); seed 20240612`,
  rows
)
