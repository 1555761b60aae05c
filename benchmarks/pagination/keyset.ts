/**
 * Keyset pages against offset pages on 1,000,000 orders, per database
 * (BENCH_DB=sqlite,pg,mysql) and per sort shape: the keyset page at depth
 * 500,000 costs about what page 1 costs (target <= 1.5x), while Lucid's
 * `paginate` at the same depth is far slower (target >= 50x on PostgreSQL
 * and MariaDB). Prints the plan of each keyset query, and the deep page with
 * its segments always in one statement (`combineSegments: true`) beside it.
 */
import { mkdir } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { Database } from '@adonisjs/lucid/database'
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { defineFilters, LucidAdapter } from '../../src/pagination/main.ts'
import { ensureOrders, explain } from '../lib/orders.ts'
import { figure, median, printTable, sample } from '../lib/report.ts'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const DEPTH = Math.floor(ROWS / 2)
const PAGE = 25
const databases = (process.env.BENCH_DB ?? 'sqlite,pg,mysql')
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean) as Dialect[]

const directory = fileURLToPath(new URL('../../tmp/bench/', import.meta.url))
await mkdir(directory, { recursive: true })

const orders = defineFilters(
  { table: 'bench_orders' },
  {
    fields: {
      createdAt: { column: 'created_at', type: 'datetime' },
      shippedAt: { column: 'shipped_at', type: 'datetime', nullable: true },
      amount: 'number',
    },
    filterable: { status: ['eq'] },
    sortable: ['createdAt', 'shippedAt', 'status', 'amount'],
  }
).with({ config: {} })

const SHAPES = [
  { shape: 'single column', input: { sort: '-createdAt' } as any, depth: DEPTH },
  // The page after row 500,000 starts the third status: an empty tie, then what lies beyond it
  { shape: 'mixed directions', input: { sort: 'status,-amount' }, depth: DEPTH },
  // The same at the first status's end: what a group's end costs does not grow with depth
  { shape: 'mixed, first group end', input: { sort: 'status,-amount' }, depth: DEPTH / 2 },
  // Ten rows before the third status: the rest of the tie, then what lies beyond it
  { shape: 'mixed, across groups', input: { sort: 'status,-amount' }, depth: DEPTH - 10 },
  // Three quarters into the second status: the tie alone fills the page
  {
    shape: 'mixed, inside a group',
    input: { sort: 'status,-amount' },
    depth: Math.floor((ROWS * 7) / 16),
  },
  { shape: 'nullable column', input: { sort: '-shippedAt' }, depth: DEPTH },
  // A quarter of the rows are paid: the walk's middle is at 125,000
  {
    shape: 'filter + sort',
    input: { sort: '-createdAt', filter: { status: 'paid' } },
    depth: Math.floor(ROWS / 8),
  },
]

// The same runner with a page's segments always in one statement (by default only at a boundary)
const combined = orders.with({ adapter: new LucidAdapter({ combineSegments: true }) })

/**
 * Runs each function once per round, `runs` measured rounds after `warmup`;
 * the durations of each function in milliseconds.
 */
async function interleaved(
  fns: (() => Promise<unknown>)[],
  { runs, warmup }: { runs: number; warmup: number }
) {
  const durations: number[][] = fns.map(() => [])
  for (let round = 0; round < warmup + runs; round++) {
    for (const [index, fn] of fns.entries()) {
      const start = performance.now()
      await fn()
      if (round >= warmup) durations[index].push(performance.now() - start)
    }
  }
  return durations
}

const results: Record<string, string>[] = []
for (const which of databases) {
  const db = new Database(
    { connection: which, connections: { [which]: connectionConfig(which, directory) } },
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(new URL('../../', import.meta.url)))
  )
  const started = performance.now()
  const { seeded } = await ensureOrders(db, 'bench_', ROWS)
  console.log(
    `\n[${which}] bench_orders ${seeded ? `seeded with ${ROWS.toLocaleString('en-US')} rows in ${figure((performance.now() - started) / 1000)} s` : 'reused'}`
  )

  for (const { shape, input, depth } of SHAPES) {
    const from = () => db.from('bench_orders')
    const start = await orders.findPage(from().offset(depth - 1), {
      ...input,
      paginate: { first: 1 },
    })
    const after = start.endCursor!
    const queries: any[] = []
    await orders.findPage(
      from(),
      { ...input, paginate: { first: PAGE, after } },
      { onQuery: (query) => queries.push(query.toSQL()) }
    )

    await combined.findPage(
      from(),
      { ...input, paginate: { first: PAGE, after } },
      { onQuery: (query) => queries.push({ ...query.toSQL(), combined: true }) }
    )

    // Interleaved, so a busy machine slows page 1 and the deep pages alike
    const [first, deep, deepCombined] = await interleaved(
      [
        () => orders.findPage(from(), { ...input, paginate: { first: PAGE } }),
        () => orders.findPage(from(), { ...input, paginate: { first: PAGE, after } }),
        () => combined.findPage(from(), { ...input, paginate: { first: PAGE, after } }),
      ],
      { runs: 100, warmup: 10 }
    )
    const offset = await sample(
      () =>
        orders.findAndCount(from(), {
          ...input,
          page: Math.floor(depth / PAGE) + 1,
          perPage: PAGE,
        }),
      { runs: 3, warmup: 1 }
    )
    const keysetFirst = median(first)
    const keysetDeep = median(deep)
    const offsetDeep = median(offset.durations)
    results.push({
      'db': which,
      'sort shape': shape,
      'depth': depth.toLocaleString('en-US'),
      'keyset p1 ms': figure(keysetFirst),
      'keyset deep ms': figure(keysetDeep),
      'deep/p1 (<= 1.5)': figure(keysetDeep / keysetFirst),
      'always combined deep/p1': figure(median(deepCombined) / keysetFirst),
      'offset deep ms': figure(offsetDeep),
      'offset/keyset (>= 50)': figure(offsetDeep / keysetDeep),
    })

    console.log(`\n[${which}] ${shape}: keyset query at depth ${depth.toLocaleString('en-US')}`)
    for (const query of queries) {
      // The always-combined page is worth printing where it differs from the default one
      if (query.combined && queries.some((other) => !other.combined && other.sql === query.sql)) {
        continue
      }
      console.log(`  ${query.combined ? '(combined) ' : ''}${query.sql}`)
      for (const line of await explain(db, query.sql, query.bindings)) console.log(`    ${line}`)
    }
  }
  await db.manager.closeAll()
}

printTable(
  `Keyset vs offset pages on ${ROWS.toLocaleString('en-US')} rows, ${PAGE} per page (medians; offset = Lucid paginate with its count)`,
  results
)
