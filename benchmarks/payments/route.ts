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
import { groupCpu, groupCpuSpent, pidsNamed, processCpuMicros } from '../lib/process_cpu.ts'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1500)
const only = process.env.BENCH_GATEWAYS?.split(',')
const fixtures = GATEWAY_FIXTURES.filter(({ name }) => !only || only.includes(name))
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const dialects = (process.env.BENCH_DB ?? 'sqlite,pg').split(',') as Dialect[]
const POOL = Number(process.env.BENCH_POOL ?? 10)

/** CPU per process over a route's measured windows, in µs */
interface CpuSpent {
  app: number
  load: number
  api: number | undefined
  db: number | undefined
}

/** The database server's processes (SQLite runs inside the app) */
const DATABASE_PROCESSES: Record<Dialect, string[]> = {
  sqlite: [],
  pg: ['postgres'],
  mysql: ['mariadbd', 'mysqld'],
}

interface RouteTotals extends LoadResult {
  cpu: CpuSpent
}

function emptyResult(): RouteTotals {
  return { elapsed: 0, latencies: [], statuses: {}, cpu: { app: 0, load: 0, api: 0, db: 0 } }
}

/**
 * Runs `measure` and returns the CPU each process spent meanwhile: the app
 * (this process), the API stand-in and the database server, read from /proc
 * (the load generator reports its own).
 */
async function withCpu<T>(
  apiPid: number,
  databaseProcesses: string[],
  measure: () => Promise<T>
): Promise<{ value: T; app: number; api?: number; db?: number }> {
  const findDatabase = () => pidsNamed(databaseProcesses)
  const app = process.cpuUsage()
  const api = processCpuMicros(apiPid)
  const db = databaseProcesses.length ? groupCpu(findDatabase) : undefined
  const value = await measure()
  const appSpent = process.cpuUsage(app)
  const apiAfter = processCpuMicros(apiPid)
  return {
    value,
    app: appSpent.user + appSpent.system,
    api: api === undefined || apiAfter === undefined ? undefined : apiAfter - api,
    db: db?.size ? groupCpuSpent(db, groupCpu(findDatabase)) : undefined,
  }
}

function addCpu(total: CpuSpent, spent: { app: number; api?: number; db?: number }, load?: number) {
  total.app += spent.app
  total.load += load ?? 0
  total.api = total.api === undefined || spent.api === undefined ? undefined : total.api + spent.api
  total.db = total.db === undefined || spent.db === undefined ? undefined : total.db + spent.db
}

/** µs of CPU per request, or `-` when the process could not be read */
function perRequest(micros: number | undefined, requests: number) {
  return micros === undefined ? '-' : figure(micros / requests)
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
  const requests = result.latencies.length
  return {
    rps: requests / seconds,
    p50: percentile(result.latencies, 50),
    p99: percentile(result.latencies, 99),
    statuses: Object.entries(result.statuses)
      .map(([status, count]) => `${status}x${count}`)
      .join(' '),
  }
}

/** Where a route's CPU went, per request: app · load generator · API stand-in · database server */
function cpuColumn({ cpu, latencies }: RouteTotals, which: Dialect) {
  const requests = latencies.length
  return [
    perRequest(cpu.app, requests),
    perRequest(cpu.load, requests),
    perRequest(cpu.api, requests),
    which === 'sqlite' ? 'in app' : perRequest(cpu.db, requests),
  ].join(' · ')
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
      const total = totals.get(route.name)!
      const measured = await withCpu(api.pid, DATABASE_PROCESSES[which], () =>
        load(route, perRound, `${route.name}${round}`)
      )
      addResult(total, measured.value)
      addCpu(total.cpu, measured, measured.value.cpuMicros)
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
      'CPU µs/req (app · load · API · db)': cpuColumn(totals.get(route.name)!, which),
      'statuses': result.statuses,
    })
  }
  await close()
  await api.close()
  await rm(directory, { recursive: true, force: true })
}

printTable(
  `Each gateway's webhook route vs the bare route (${REQUESTS} requests each in 5 alternating rounds, ${CONCURRENCY} concurrent, pool ${POOL}, load in a child process; target on pg: ratio >= 0.40 for every gateway; the app, the load generator, the gateway API stand-in and the database server share this machine's cores, so the CPU column says where each request's CPU went)`,
  rows
)
