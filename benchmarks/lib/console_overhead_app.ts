/**
 * The app the console's overhead benchmarks serve: `POST /work` runs three
 * Lucid queries and writes a log line, with the console recording (request,
 * exception, query and log watchers, the Lucid store on the app's own
 * connection) or `enabled: false`.
 */
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { defineConfig, watchers } from '../../src/console/main.ts'
import { bootHttpApp } from './http_app.ts'

export async function bootOverheadApp(
  which: Dialect,
  directory: string,
  recording: boolean,
  options: {
    /** `buffer.flushAt` of the recording app (the default when unset) */
    flushAt?: number
    /** `sampling.request` of the recording app (keep all when unset) */
    requestSampling?: number
  } = {}
) {
  const { flushAt, requestSampling } = options
  const connection: any = connectionConfig(which, directory)
  if (which === 'sqlite') {
    connection.pool = {
      afterCreate: (raw: any, done: any) => {
        raw.pragma('journal_mode = WAL')
        done(null, raw)
      },
    }
  }
  return bootHttpApp({
    appRoot: new URL(`file://${directory}/`),
    providers: [
      () => import('@adonisjs/lucid/database_provider'),
      () => import('../../providers/console_provider.ts'),
    ],
    config: {
      database: { connection: which, connections: { [which]: connection } },
      console: defineConfig({
        enabled: recording,
        watchers: [watchers.queries(), watchers.logs()],
        // measure the cost of recording, not of pausing it under the load
        overloadProtection: false,
        ...(flushAt ? { buffer: { flushAt } } : {}),
        ...(requestSampling !== undefined ? { sampling: { request: requestSampling } } : {}),
      }),
      logger: {
        default: 'app',
        loggers: { app: { enabled: true, level: 'info', destination: '/dev/null' } },
      },
    },
    routes(router) {
      router.post('/work', async (ctx) => {
        const db = await ctx.containerResolver.make('lucid.db')
        const one = await db.from('bench_items').where('id', 7).first()
        const count = await db.from('bench_items').count('* as total')
        const page = await db
          .from('bench_items')
          .select('id', 'name')
          .orderBy('id', 'desc')
          .limit(10)
        ctx.logger.info('work done')
        return { one: one?.id, total: count[0].total, page: page.length }
      })
    },
  })
}

/** The load generator's plan for `POST /work` on `url` */
export function workPlan(url: string, requests: number, concurrency: number) {
  return {
    url: `${url}/work`,
    concurrency,
    requests,
    bodies: 'same',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  }
}

/** The table the route reads, 100 rows */
export async function seedBenchItems(db: any) {
  await db.connection().schema.dropTableIfExists('bench_items')
  await db.connection().schema.createTable('bench_items', (table: any) => {
    table.increments('id')
    table.string('name')
  })
  await db
    .table('bench_items')
    .multiInsert(Array.from({ length: 100 }, (_, i) => ({ name: `item ${i}` })))
}
