/**
 * Every gateway's full webhook route (verification, ledger claim, billing
 * sync, a no-op handler, mark processed) beside a bare Adonis route that
 * answers 200, in the same app and run, on SQLite and PostgreSQL, in one
 * table. The gateways are those of benchmarks/lib/gateway_fixtures.ts; a
 * child process generates the load over keep-alive sockets on loopback.
 * `BENCH_GATEWAYS=stripe,square` limits the run to some of them.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineConfig as bodyParserConfig } from '@adonisjs/core/bodyparser'
import { BodyParserMiddleware } from '@adonisjs/bodyparser/bodyparser_middleware'
import type { Dialect } from '../../tests/helpers.ts'
import { defineWebhookHandler } from '../../src/payments/main.ts'
import { runLoad, type LoadResult } from '../lib/http_app.ts'
import { appConnection, bootPaymentsBench } from '../lib/payments_app.ts'
import { GATEWAY_FIXTURES, fixtureProviders, gatewayApiStandIn } from '../lib/gateway_fixtures.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500)
const only = process.env.BENCH_GATEWAYS?.split(',')
const fixtures = GATEWAY_FIXTURES.filter(({ name }) => !only || only.includes(name))
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const dialects = (process.env.BENCH_DB ?? 'sqlite,pg').split(',') as Dialect[]
const POOL = Number(process.env.BENCH_POOL ?? 10)

function emptyResult(): LoadResult {
  return { elapsed: 0, latencies: [], statuses: {} }
}

function addResult(total: LoadResult, result: LoadResult) {
  total.elapsed += result.elapsed
  total.latencies.push(...result.latencies)
  for (const [status, count] of Object.entries(result.statuses)) {
    total.statuses[status] = (total.statuses[status] ?? 0) + count
  }
}

function summary(result: LoadResult) {
  const seconds = result.elapsed / 1000
  return {
    rps: result.latencies.length / seconds,
    p50: percentile(result.latencies, 50),
    p99: percentile(result.latencies, 99),
    statuses: Object.entries(result.statuses)
      .map(([status, count]) => `${status}x${count}`)
      .join(' '),
  }
}

const stripeFixture = GATEWAY_FIXTURES.find(({ name }) => name === 'stripe')!

const rows: Record<string, string>[] = []
for (const which of dialects) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-payments-'))
  const parser = bodyParserConfig({})
  const api = await gatewayApiStandIn({ paid: true })
  const { server, close } = await bootPaymentsBench({
    which,
    directory,
    connection: appConnection(which, directory, POOL),
    providers: fixtureProviders(api.url),
    handlers: { 'payment.succeeded': defineWebhookHandler('payment.succeeded', () => {}) },
    routes(router) {
      router.use([
        async () => ({
          default: class extends BodyParserMiddleware {
            constructor() {
              super(parser as any)
            }
          },
        }),
      ])
      router.post('/bare', () => ({ received: true }))
    },
  })

  const routes = [
    { name: 'bare', path: '/bare', gateway: 'stripe', credentials: {} },
    ...fixtures.map((fixture) => ({
      name: fixture.name,
      path: `/payments/webhook/${fixture.name}`,
      gateway: fixture.name,
      credentials: fixture.credentials(api.url),
    })),
  ]
  const load = (route: (typeof routes)[number], requests: number, prefix: string) =>
    runLoad({
      url: `${server.url}${route.path}`,
      concurrency: CONCURRENCY,
      requests,
      bodies: 'gateway',
      gateway: route.gateway,
      // the bare route answers any body; it is sent Stripe's so its bytes match a real delivery
      credentials: route.name === 'bare' ? stripeFixture.credentials(api.url) : route.credentials,
      prefix,
    })

  // Warm every path up (JIT, pools, SDKs) before measuring
  for (const route of routes) {
    await load(route, 300, `w${route.name}`)
  }

  // All routes take turns in rounds so load from elsewhere on the machine hits them alike
  const ROUNDS = 5
  const perRound = Math.ceil(REQUESTS / ROUNDS)
  const totals = new Map(routes.map((route) => [route.name, emptyResult()]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const route of routes) {
      addResult(totals.get(route.name)!, await load(route, perRound, `${route.name}${round}`))
    }
  }
  const bare = summary(totals.get('bare')!)
  for (const route of routes) {
    const result = summary(totals.get(route.name)!)
    rows.push({
      'db': which,
      'route':
        route.name === 'bare' ? 'bare Adonis POST -> 200 (baseline)' : `${route.path} (full)`,
      'req/s': figure(result.rps),
      'p50 ms': figure(result.p50),
      'p99 ms': figure(result.p99),
      'ratio': route.name === 'bare' ? '1.00' : figure(result.rps / bare.rps),
      'statuses': result.statuses,
    })
  }
  await close()
  await api.close()
  await rm(directory, { recursive: true, force: true })
}

printTable(
  `Each gateway's webhook route vs the bare route (${REQUESTS} requests each in 5 alternating rounds, ${CONCURRENCY} concurrent, pool ${POOL}, load in a child process; target on pg: ratio >= 0.40 for every gateway)`,
  rows
)
