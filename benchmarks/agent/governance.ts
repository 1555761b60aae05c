/**
 * Governance `/spend` and `/reliability` over 1,000,000 usage rows, through
 * the real HTTP server, on each dialect of `BENCH_DB` (SQLite and PostgreSQL
 * by default). The tables come from the migration stubs and are seeded with
 * set-based SQL: 90 days of runs and usage from ~500 actors, 20 models and 5
 * agents, and the daily rollups the gateway would have written for them (the
 * day × model × actor × agent one and the narrow ones the routes read),
 * summed from those same rows so they agree exactly. Target: p50 <= 50 ms.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { performance } from 'node:perf_hooks'
import { Database } from '@adonisjs/lucid/database'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { migrateStubs } from '../../tests/migration_stubs.ts'
import { FakeModelServer } from '../../tests/agent/fake_model.ts'
import { fakeProviderModel } from '../../tests/agent/helpers.ts'
import { actors, defineConfig, durationBucket } from '../../src/agent/main.ts'
import { bootHttpApp } from '../lib/http_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const dialects = (process.env.BENCH_DB ?? 'sqlite,pg').split(',') as Dialect[]
const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const WARMUP = 10
const TARGET_P50_MS = 50

/** The rollups each view of the two routes reads, one per view */
const NARROW_ROLLUPS = [
  'agent_model_rollups',
  'agent_actor_rollups',
  'agent_run_rollups',
  'agent_error_rollups',
  'agent_duration_rollups',
]

const USAGE_ROWS = 1_000_000
const RUN_ROWS = 300_000
const THREADS = 60_000
const ACTORS = 500
const MODELS = 20
const AGENTS = 5
const DAYS = 90
/** Milliseconds between two runs' starts, so RUN_ROWS runs span DAYS days */
const RUN_SPACING_MS = Math.floor((DAYS * 86_400_000) / RUN_ROWS)

/** The few expressions SQLite and PostgreSQL spell differently */
interface Dialectal {
  /** A CTE `numbers(i)` of 1..count */
  numbers(count: number): string
  /** A stored timestamp from epoch milliseconds */
  timestamp(ms: string): string
  /** The UTC day `YYYY-MM-DD` of a stored timestamp */
  dayOf(timestamp: string): string
}

const SQL: Record<'sqlite' | 'pg', Dialectal> = {
  sqlite: {
    numbers: (count) =>
      `with recursive numbers(i) as (select 1 union all select i + 1 from numbers where i < ${count})`,
    // knex binds a Date to better-sqlite3 as its epoch milliseconds
    timestamp: (ms) => `(${ms})`,
    dayOf: (timestamp) => `strftime('%Y-%m-%d', ${timestamp} / 1000, 'unixepoch')`,
  },
  pg: {
    numbers: (count) => `with numbers(i) as (select generate_series(1::bigint, ${count}))`,
    timestamp: (ms) => `to_timestamp((${ms}) / 1000.0)`,
    dayOf: (timestamp) => `to_char(${timestamp} at time zone 'UTC', 'YYYY-MM-DD')`,
  },
}

/**
 * The seeding statements. Every column of a run and its usage rows is
 * arithmetic on the run's number `r`, so usage rows repeat their run's
 * thread, actor, agent and model without a join.
 */
function seedStatements(sql: Dialectal, nowMs: number) {
  const thread = (r: string) => `(${r} % ${THREADS})`
  const actor = (r: string) => `(${thread(r)} % ${ACTORS})`
  const agent = (r: string) => `(${actor(r)} % ${AGENTS})`
  // Each actor uses three of the twenty models
  const model = (r: string) => `(((${actor(r)}) + (${r} % 3) * 7) % ${MODELS})`
  const started = (r: string) => `(${nowMs} - ${r} * ${RUN_SPACING_MS} - (${r} * 7) % 20000)`
  // Skewed: most runs take a few seconds, a tail takes up to ~50 s
  const duration = (r: string) => `(200 + ((${r} * 7919) % 1000) * ((${r} * 31) % 50))`
  // 6% failed, 2% cancelled, the rest done
  const status = (r: string) =>
    `case when ${r} % 50 < 3 then 'failed' when ${r} % 50 = 3 then 'aborted' else 'done' end`
  const errorCode = (r: string) =>
    `case when ${r} % 50 < 3 then (case (${r} / 50) % 3 when 0 then 'run_failed' when 1 then 'quota_exceeded' else 'max_steps' end) when ${r} % 50 = 3 then 'aborted' end`
  // 1,000,000 usage rows: three steps for every run, a fourth for the first 100,000
  const steps = (r: string) => `(case when ${r} <= ${USAGE_ROWS - 3 * RUN_ROWS} then 4 else 3 end)`

  const usageRun = `((i - 1) % ${RUN_ROWS} + 1)`
  const usageStep = `((i - 1) / ${RUN_ROWS})`
  const known = `(i % 200 <> 0)`
  const tokens = (expression: string) => `case when ${known} then ${expression} else 0 end`
  const uncached = tokens(`500 + (i * 37) % 3000`)
  const cacheRead = tokens(`((i * 13) % 4) * 1000`)
  const cacheWrite = tokens(`case when i % 10 = 0 then 2000 else 0 end`)
  const output = tokens(`100 + (i * 17) % 1500`)
  const reasoning = tokens(`case when ${model(usageRun)} % 4 = 0 then (i * 11) % 800 else 0 end`)
  // The last model has no price: its calls cost 0 and count as unpriced
  const unpriced = `${model(usageRun)} = ${MODELS - 1}`
  const usageCreated = sql.timestamp(`${started(usageRun)} + ${usageStep} * 1000`)

  return [
    `${sql.numbers(THREADS)}
     insert into agent_threads (id, actor_ref, title, created_at, updated_at)
     select 'thr-' || (i - 1), 'actor-' || ((i - 1) % ${ACTORS}), 'Thread ' || (i - 1),
            ${sql.timestamp(String(nowMs - DAYS * 86_400_000))}, ${sql.timestamp(String(nowMs))}
     from numbers`,
    `${sql.numbers(RUN_ROWS)}
     insert into agent_runs (id, thread_id, actor_ref, agent_name, status, error_code, steps,
                             created_at, finished_at, duration_ms)
     select 'run-' || i, 'thr-' || ${thread('i')}, 'actor-' || ${actor('i')},
            'agent-' || ${agent('i')}, ${status('i')}, ${errorCode('i')}, ${steps('i')},
            ${sql.timestamp(started('i'))}, ${sql.timestamp(`${started('i')} + ${duration('i')}`)},
            ${duration('i')}
     from numbers`,
    `${sql.numbers(USAGE_ROWS)}
     insert into agent_usage (run_id, thread_id, actor_ref, agent_name, model, kind, step,
                              usage_known, uncached_input_tokens, cache_read_tokens,
                              cache_write_tokens, output_tokens, reasoning_tokens, price_id,
                              cost, cost_source, day, created_at)
     select 'run-' || ${usageRun}, 'thr-' || ${thread(usageRun)}, 'actor-' || ${actor(usageRun)},
            'agent-' || ${agent(usageRun)}, 'model-' || ${model(usageRun)}, 'chat', ${usageStep},
            ${known}, ${uncached}, ${cacheRead}, ${cacheWrite}, ${output}, ${reasoning}, null,
            case when ${unpriced} then 0
                 else (${uncached}) * 3 + (${cacheRead}) * 3 / 10 + (${cacheWrite}) * 4
                      + ((${output}) + (${reasoning})) * 15 end,
            case when ${unpriced} then 'unpriced' else 'estimated' end,
            ${sql.dayOf(usageCreated)}, ${usageCreated}
     from numbers`,
    // What the ledger's upserts add up to: each usage row on its day, each
    // run's end on the day it ended under the model of its calls
    `insert into agent_rollups (day, model, actor_ref, agent_name, model_calls,
       unknown_usage_calls, unpriced_calls, uncached_input_tokens, cache_read_tokens,
       cache_write_tokens, output_tokens, reasoning_tokens, cost, runs_succeeded, runs_failed,
       runs_cancelled)
     select day, model, actor_ref, agent_name, sum(model_calls), sum(unknown_usage_calls),
            sum(unpriced_calls), sum(uncached_input_tokens), sum(cache_read_tokens),
            sum(cache_write_tokens), sum(output_tokens), sum(reasoning_tokens), sum(cost),
            sum(runs_succeeded), sum(runs_failed), sum(runs_cancelled)
     from (
       select day, model, actor_ref, agent_name, 1 as model_calls,
              case when usage_known then 0 else 1 end as unknown_usage_calls,
              case when cost_source = 'unpriced' then 1 else 0 end as unpriced_calls,
              uncached_input_tokens, cache_read_tokens, cache_write_tokens, output_tokens,
              reasoning_tokens, cost, 0 as runs_succeeded, 0 as runs_failed, 0 as runs_cancelled
       from agent_usage
       union all
       select ${sql.dayOf('r.finished_at')}, u.model, r.actor_ref, r.agent_name, 0, 0, 0, 0, 0, 0,
              0, 0, 0,
              case when r.status = 'done' then 1 else 0 end,
              case when r.status = 'failed' then 1 else 0 end,
              case when r.status = 'aborted' then 1 else 0 end
       from agent_runs r
       join agent_usage u on u.run_id = r.id and u.step = 0
       where r.finished_at is not null
     ) ledger
     group by day, model, actor_ref, agent_name`,
    // The narrow rollups the same upserts write: spend per day × model and
    // day × actor, runs per day × agent, failures per day × error code
    ...(['model', 'actor_ref'] as const).map(
      (key) =>
        `insert into agent_${key === 'model' ? 'model' : 'actor'}_rollups (day, ${key},
           ${SPEND_COUNTERS})
         select day, ${key}, ${SPEND_COUNTERS.split(', ')
           .map((column) => `sum(${column})`)
           .join(', ')}
         from agent_rollups group by day, ${key} having sum(model_calls) > 0`
    ),
    `insert into agent_run_rollups (day, agent_name, runs_succeeded, runs_failed, runs_cancelled)
     select day, agent_name, sum(runs_succeeded), sum(runs_failed), sum(runs_cancelled)
     from agent_rollups group by day, agent_name`,
    `insert into agent_error_rollups (day, error_code, runs_failed)
     select ${sql.dayOf('finished_at')}, coalesce(error_code, 'unknown'), count(*)
     from agent_runs where status = 'failed'
     group by ${sql.dayOf('finished_at')}, coalesce(error_code, 'unknown')`,
    // Each run's duration in its day × agent histogram, through the bucket of
    // every duration the seed can produce (computed by the gateway's own function)
    `insert into agent_duration_rollups (day, agent_name, bucket, runs)
     select ${sql.dayOf('r.finished_at')}, r.agent_name, b.bucket, count(*)
     from agent_runs r join bench_duration_buckets b on b.duration_ms = r.duration_ms
     where r.duration_ms is not null
     group by ${sql.dayOf('r.finished_at')}, r.agent_name, b.bucket`,
  ]
}

const SPEND_COUNTERS =
  'model_calls, unknown_usage_calls, unpriced_calls, uncached_input_tokens, ' +
  'cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost'

/** The longest duration the seed writes: 200 + 999 * 49 ms */
const MAX_SEEDED_DURATION_MS = 200 + 999 * 49

/** A lookup table from each seeded duration to its histogram bucket */
async function seedDurationBuckets(trx: any) {
  await trx.rawQuery(
    'create table bench_duration_buckets (duration_ms integer primary key, bucket integer not null)'
  )
  const rows = Array.from({ length: MAX_SEEDED_DURATION_MS + 1 }, (_, ms) => ({
    duration_ms: ms,
    bucket: durationBucket(ms),
  }))
  for (let start = 0; start < rows.length; start += 400) {
    await trx.table('bench_duration_buckets').multiInsert(rows.slice(start, start + 400))
  }
}

/** The benchmark's connection: SQLite in WAL mode; PostgreSQL in a schema of its own */
function benchConnection(which: Dialect, directory: string, schema: string) {
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
    config.searchPath = [schema]
  }
  return config
}

function openDatabase(which: Dialect, config: any, appRoot: URL) {
  return new Database(
    { connection: which, connections: { [which]: config } } as any,
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(appRoot))
  )
}

/** A table's row count, formatted for the table */
async function rowCount(db: Database, table: string) {
  const [row] = await db.from(table).count('* as total')
  return Number(row.total).toLocaleString('en-US')
}

/** The UTC day `days` before today */
function dayBefore(days: number) {
  const day = new Date()
  day.setUTCDate(day.getUTCDate() - days)
  return day.toISOString().slice(0, 10)
}

async function timeRoute(url: string, check: (body: any) => boolean) {
  const once = async () => {
    const start = performance.now()
    const response = await fetch(url)
    const body = await response.json()
    const elapsed = performance.now() - start
    if (response.status !== 200 || !check(body)) {
      throw new Error(
        `GET ${url} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`
      )
    }
    return elapsed
  }
  for (let index = 0; index < WARMUP; index++) await once()
  const values: number[] = []
  for (let index = 0; index < RUNS; index++) values.push(await once())
  return values
}

const figures: Record<string, string | number>[] = []
const counts: Record<string, string | number>[] = []

for (const which of dialects) {
  if (which !== 'sqlite' && which !== 'pg') throw new Error(`BENCH_DB: unsupported "${which}"`)
  const directory = await mkdtemp(join(tmpdir(), 'atrium-agent-governance-'))
  const appRoot = pathToFileURL(`${directory}/`)
  const schema = `bench_agent_governance_${process.pid}`
  const config = benchConnection(which, directory, schema)
  const db = openDatabase(which, config, appRoot)
  const fake = await new FakeModelServer().start()
  let http: Awaited<ReturnType<typeof bootHttpApp>> | undefined
  try {
    if (which === 'pg') await db.rawQuery(`create schema "${schema}"`)
    await migrateStubs(db, 'agent')

    const seedStart = performance.now()
    if (which === 'sqlite') await db.rawQuery('pragma synchronous = off')
    await db.transaction(async (trx) => {
      await seedDurationBuckets(trx)
      for (const statement of seedStatements(SQL[which], Date.now())) await trx.rawQuery(statement)
      await trx.rawQuery('drop table bench_duration_buckets')
    })
    // Fresh statistics, as autovacuum (PostgreSQL) or `pragma optimize` (SQLite) would keep
    for (const table of [
      'agent_threads',
      'agent_runs',
      'agent_usage',
      'agent_rollups',
      ...NARROW_ROLLUPS,
    ]) {
      await db.rawQuery(which === 'pg' ? `vacuum analyze ${table}` : `analyze ${table}`)
    }
    if (which === 'sqlite') await db.rawQuery('pragma synchronous = normal')
    const seedSeconds = (performance.now() - seedStart) / 1000
    counts.push({
      db: which,
      agent_usage: await rowCount(db, 'agent_usage'),
      agent_runs: await rowCount(db, 'agent_runs'),
      agent_rollups: await rowCount(db, 'agent_rollups'),
      ...Object.fromEntries(
        await Promise.all(
          NARROW_ROLLUPS.map(async (table) => [table.slice(6), await rowCount(db, table)])
        )
      ),
      seeding: figure(seedSeconds, ' s'),
    })

    http = await bootHttpApp({
      appRoot,
      providers: [
        () => import('@adonisjs/lucid/database_provider'),
        () => import('../../providers/agent_provider.ts'),
      ],
      config: {
        database: { connection: which, connections: { [which]: config } },
        agent: defineConfig({
          model: fakeProviderModel(fake, 'openai'),
          actorResolver: actors.header(),
          dashboard: { authorize: () => true },
        }),
      },
    })

    const windows = [
      { name: 'default (30 days)', query: '' },
      { name: '90 days', query: `?from=${dayBefore(DAYS - 1)}&to=${dayBefore(0)}` },
    ]
    const routes = [
      {
        path: 'spend',
        check: (body: any) => body.byModel?.length > 0 && body.byActor?.length > 0,
      },
      {
        path: 'reliability',
        check: (body: any) => body.metrics?.runs > 0 && body.byAgent?.length > 0,
      },
    ]
    for (const route of routes) {
      for (const window of windows) {
        const url = `${http.url}/ai-gateway/api/${route.path}${window.query}`
        const values = await timeRoute(url, route.check)
        const p50 = percentile(values, 50)
        figures.push({
          'db': which,
          'route': `GET /${route.path}`,
          'window': window.name,
          'p50': figure(p50, ' ms'),
          'p99': figure(percentile(values, 99), ' ms'),
          'target p50': `<= ${TARGET_P50_MS} ms`,
          'met': p50 <= TARGET_P50_MS ? 'yes' : 'NO',
        })
      }
    }
  } finally {
    await http?.close()
    await fake.close()
    if (which === 'pg') await db.rawQuery(`drop schema if exists "${schema}" cascade`)
    await db.manager.closeAll()
    await rm(directory, { recursive: true, force: true })
  }
  // Each dialect's figures as soon as it is done, so a later failure keeps them
  printTable(
    `Seeded rows (${DAYS} days, ${ACTORS} actors, ${MODELS} models, ${AGENTS} agents)`,
    counts.filter((row) => row.db === which)
  )
  printTable(
    `Governance API over ${USAGE_ROWS.toLocaleString('en-US')} usage rows, ${RUNS} sequential requests each after ${WARMUP} warm-ups`,
    figures.filter((row) => row.db === which)
  )
}
