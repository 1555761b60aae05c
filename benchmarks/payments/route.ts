/**
 * The full Stripe webhook route (SDK verification, ledger claim, billing
 * sync, a no-op handler, mark processed) beside a bare Adonis route that
 * answers 200, in the same app and run, on SQLite and PostgreSQL. A child
 * process generates the load over keep-alive sockets on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defineConfig as bodyParserConfig } from '@adonisjs/core/bodyparser'
import { BodyParserMiddleware } from '@adonisjs/bodyparser/bodyparser_middleware'
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { defineWebhookHandler } from '../../src/payments/main.ts'
import { runLoad, type LoadResult } from '../lib/http_app.ts'
import { STRIPE_SECRET, bootPaymentsBench } from '../lib/payments_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const dialects = (process.env.BENCH_DB ?? 'sqlite,pg').split(',') as Dialect[]
const POOL = Number(process.env.BENCH_POOL ?? 10)

/**
 * The app's connection: a pool of `BENCH_POOL` (Lucid's default is 10); SQLite
 * in WAL mode, as a production SQLite should run.
 */
function appConnection(which: Dialect, directory: string) {
  const config: any = connectionConfig(which, directory)
  if (which === 'sqlite') {
    config.pool = {
      afterCreate: (connection: any, done: any) => {
        connection.pragma('journal_mode = WAL')
        connection.pragma('synchronous = NORMAL')
        done(null, connection)
      },
    }
  } else {
    config.pool = { min: 2, max: POOL }
  }
  return config
}

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

const rows: Record<string, string>[] = []
for (const which of dialects) {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-bench-payments-'))
  const parser = bodyParserConfig({})
  const { server, close } = await bootPaymentsBench({
    which,
    directory,
    connection: appConnection(which, directory),
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

  const sample = await runLoad({
    url: `${server.url}/bare`,
    concurrency: 1,
    requests: 1,
    bodies: 'stripe',
    secret: STRIPE_SECRET,
    prefix: 'sample',
  })
  void sample
  // Warm both paths up (JIT, pools, SDK) before measuring
  await runLoad({
    url: `${server.url}/bare`,
    concurrency: CONCURRENCY,
    requests: 500,
    bodies: 'stripe',
    secret: STRIPE_SECRET,
    prefix: 'wb',
  })
  await runLoad({
    url: `${server.url}/payments/webhook/stripe`,
    concurrency: CONCURRENCY,
    requests: 500,
    bodies: 'stripe',
    secret: STRIPE_SECRET,
    prefix: 'ws',
  })

  // Bare and full alternate in rounds so load from elsewhere on the machine hits both alike
  const ROUNDS = 5
  const perRound = Math.ceil(REQUESTS / ROUNDS)
  const totals = { bare: emptyResult(), full: emptyResult() }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, path] of [
      ['bare', '/bare'],
      ['full', '/payments/webhook/stripe'],
    ] as const) {
      addResult(
        totals[name],
        await runLoad({
          url: `${server.url}${path}`,
          concurrency: CONCURRENCY,
          requests: perRound,
          bodies: 'stripe',
          secret: STRIPE_SECRET,
          prefix: `${name}${round}`,
        })
      )
    }
  }
  const bare = summary(totals.bare)
  const full = summary(totals.full)
  rows.push(
    {
      'db': which,
      'route': 'bare Adonis POST -> 200 (baseline)',
      'req/s': figure(bare.rps),
      'p50 ms': figure(bare.p50),
      'p99 ms': figure(bare.p99),
      'ratio': '1.00',
      'statuses': bare.statuses,
    },
    {
      'db': which,
      'route': 'POST /payments/webhook/stripe (full)',
      'req/s': figure(full.rps),
      'p50 ms': figure(full.p50),
      'p99 ms': figure(full.p99),
      'ratio': figure(full.rps / bare.rps),
      'statuses': full.statuses,
    }
  )
  await close()
  await rm(directory, { recursive: true, force: true })
}

printTable(
  `Stripe webhook route vs bare route (${REQUESTS} requests each in 5 alternating rounds, ${CONCURRENCY} concurrent, pool ${POOL}, load in a child process; target on pg: ratio >= 0.40)`,
  rows
)
