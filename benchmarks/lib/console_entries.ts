/**
 * What the console benchmarks share: their database (SQLite in WAL mode, or
 * PostgreSQL in a schema of its own) and their stored entries, a realistic
 * mix of types, summaries and content with time-ordered ids, written through
 * the store's own flush path.
 */
import { pathToFileURL } from 'node:url'
import { Database } from '@adonisjs/lucid/database'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { connectionConfig, type Dialect } from '../../tests/helpers.ts'
import { entryId } from '../../src/console/ids.ts'
import type { LucidConsoleStore } from '../../src/console/stores/lucid.ts'
import type { ConsoleEntry } from '../../src/console/types.ts'

/**
 * The Lucid connection of a console benchmark: SQLite in WAL mode (with
 * `autoVacuum`, when given, set before any table exists), PostgreSQL with
 * `schema` as its search path.
 */
export function benchConnection(
  which: Dialect,
  directory: string,
  schema: string,
  autoVacuum?: string
) {
  const config: any = connectionConfig(which, directory)
  if (which === 'sqlite') {
    config.pool = {
      afterCreate: (connection: any, done: any) => {
        // auto_vacuum takes effect only while the file has no table yet
        if (autoVacuum) connection.pragma(`auto_vacuum = ${autoVacuum}`)
        connection.pragma('journal_mode = WAL')
        done(null, connection)
      },
    }
  } else {
    config.searchPath = [schema]
  }
  return config
}

/** A bare Lucid `Database` (no app) on that one connection */
export function benchDatabase(which: Dialect, config: unknown, directory: string) {
  return new Database(
    { connection: which, connections: { [which]: config } } as any,
    new LoggerFactory().create(),
    new Emitter(new AppFactory().create(pathToFileURL(`${directory}/`)))
  )
}

/** Entries per `store.write`, as one large flush */
const WRITE_SIZE = 5000

const ROUTES = [
  ['GET', '/users/:id'],
  ['GET', '/orders'],
  ['POST', '/orders'],
  ['GET', '/products/:slug'],
  ['PUT', '/cart/items/:id'],
  ['POST', '/webhooks/stripe'],
  ['GET', '/health'],
  ['DELETE', '/sessions'],
] as const
const TABLES = ['users', 'orders', 'products', 'cart_items', 'sessions']
const HEADERS = {
  'host': 'shop.example.com',
  'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36',
  'accept': 'application/json',
  'accept-language': 'en-US,en;q=0.9',
  'x-request-id': '',
}
const STACK = Array.from(
  { length: 12 },
  (_, frame) =>
    `    at handler${frame} (/srv/app/build/app/controllers/orders_controller.js:${frame * 7}:15)`
).join('\n')

/**
 * One entry of the mix by its index: about 45% queries, 20% requests, 20%
 * logs, 5% each of exceptions and outgoing HTTP calls, 5% cache and jobs.
 * Ten consecutive entries share a batch, as one request's children do.
 */
export function entryAt(index: number, at: number, batchId: string): ConsoleEntry {
  const id = entryId(at)
  const [method, route] = ROUTES[index % ROUTES.length]
  const table = TABLES[index % TABLES.length]
  const base = { id, batchId, createdAt: at, status: null, method: null, durationMs: null }
  const slot = index % 20
  if (slot < 9) {
    const sql = `select "id", "name", "email", "created_at" from "${table}" where "id" = ? limit ?`
    return {
      ...base,
      type: 'query',
      summary: sql,
      durationMs: (index % 97) / 10,
      slow: false,
      tags: [],
      content: { sql, bindings: [index, 1], connection: 'pg', model: 'User', inTransaction: false },
    }
  }
  if (slot < 13) {
    const status = index % 50 === 0 ? 500 : index % 17 === 0 ? 404 : 200
    return {
      ...base,
      type: 'request',
      summary: `${method} ${route.replace(':id', String(index)).replace(':slug', `item-${index}`)}`,
      status,
      method,
      durationMs: 5 + (index % 300),
      slow: index % 300 > 250,
      tags: status >= 500 ? ['5xx'] : [],
      content: {
        method,
        path: route,
        route,
        status,
        durationMs: 5 + (index % 300),
        ip: '203.0.113.7',
        headers: { ...HEADERS, 'x-request-id': batchId },
        query: { page: String(index % 9) },
        response: { 'content-type': 'application/json', 'content-length': '812' },
      },
    }
  }
  if (slot < 17) {
    const message = `order ${index} moved to state ${index % 3 === 0 ? 'paid' : 'pending'}`
    return {
      ...base,
      type: 'log',
      summary: message,
      slow: false,
      tags: ['info'],
      content: { level: 'info', message, data: { orderId: index, attempt: index % 3 } },
    }
  }
  if (slot === 17) {
    const summary = `E_ROW_NOT_FOUND: Row not found in ${table} for id ${index}`
    return {
      ...base,
      type: 'exception',
      summary,
      status: 500,
      slow: false,
      tags: ['5xx'],
      content: { class: 'Exception', message: summary, code: 'E_ROW_NOT_FOUND', stack: STACK },
    }
  }
  if (slot === 18) {
    const url = `https://api.partner.example/v2/rates/${index % 40}`
    return {
      ...base,
      type: 'http',
      summary: `GET ${url}`,
      status: 200,
      method: 'GET',
      durationMs: 40 + (index % 120),
      slow: false,
      tags: [],
      content: { url, method: 'GET', status: 200, requestHeaders: { accept: 'application/json' } },
    }
  }
  return index % 2 === 0
    ? {
        ...base,
        type: 'cache',
        summary: `hit products:${index % 500}`,
        slow: false,
        tags: ['hit'],
        content: { event: 'hit', key: `products:${index % 500}`, store: 'redis' },
      }
    : {
        ...base,
        type: 'job',
        summary: `SendOrderEmail done`,
        durationMs: 12 + (index % 30),
        slow: false,
        tags: ['done'],
        content: { job: 'SendOrderEmail', queue: 'default', attempts: 1, payload: { index } },
      }
}

/** Writes `count` entries spread evenly from `from` over `spanMs`, two flushes in flight */
export async function seedEntries(
  store: LucidConsoleStore,
  count: number,
  from: number,
  spanMs: number
) {
  const spacing = spanMs / count
  let inFlight: Promise<void> | undefined
  for (let start = 0; start < count; start += WRITE_SIZE) {
    const entries: ConsoleEntry[] = []
    let batchId = ''
    for (let index = start; index < Math.min(count, start + WRITE_SIZE); index++) {
      const at = Math.floor(from + index * spacing)
      if (index % 10 === 0) batchId = entryId(at)
      entries.push(entryAt(index, at, batchId))
    }
    const write = store.write(entries)
    await inFlight
    inFlight = write
  }
  await inFlight
}
