/**
 * Time to first delta: a chat turn through the gateway (HTTP, actor, thread
 * and run rows, the event log, SSE framing) beside a direct AI SDK
 * `streamText` against the same loopback fake model, on SQLite. Both
 * measure from the request to the first text delta of a three-delta reply.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { performance } from 'node:perf_hooks'
import { defineConfig as bodyParserConfig } from '@adonisjs/core/bodyparser'
import { BodyParserMiddleware } from '@adonisjs/bodyparser/bodyparser_middleware'
import { Database } from '@adonisjs/lucid/database'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { streamText } from 'ai'
import { connectionConfig } from '../../tests/helpers.ts'
import { migrateStubs } from '../../tests/migration_stubs.ts'
import { FakeModelServer } from '../../tests/agent/fake_model.ts'
import { fakeProviderModel } from '../../tests/agent/helpers.ts'
import { actors, defineConfig } from '../../src/agent/main.ts'
import { bootHttpApp } from '../lib/http_app.ts'
import { figure, percentile, printTable } from '../lib/report.ts'

const RUNS = Number(process.env.BENCH_RUNS ?? 200)
const WARMUP = 20
const REPLY = { text: ['Hello', ' there', '!'] }

const directory = await mkdtemp(join(tmpdir(), 'atrium-agent-bench-'))
const appRoot = pathToFileURL(`${directory}/`)
// WAL, as a production SQLite should run (and as the payments benchmarks do)
const sqlite: any = connectionConfig('sqlite', directory)
sqlite.pool = {
  afterCreate: (connection: any, done: any) => {
    connection.pragma('journal_mode = WAL')
    connection.pragma('synchronous = NORMAL')
    done(null, connection)
  },
}
const database = { connection: 'sqlite', connections: { sqlite } }
const schemaDb = new Database(
  database as any,
  new LoggerFactory().create(),
  new Emitter(new AppFactory().create(appRoot))
)
await migrateStubs(schemaDb, 'agent')
await schemaDb.manager.closeAll()

const fake = await new FakeModelServer().start()
const model = fakeProviderModel(fake, 'openai')
const http = await bootHttpApp({
  appRoot,
  providers: [
    () => import('@adonisjs/lucid/database_provider'),
    () => import('../../providers/agent_provider.ts'),
  ],
  config: {
    database,
    agent: defineConfig({ model, actorResolver: actors.header(), modelMaxRetries: 0 }),
  },
  routes: (router) => {
    const config = bodyParserConfig({})
    router.use([
      async () => ({
        default: class extends BodyParserMiddleware {
          constructor() {
            super(config as any)
          }
        },
      }),
    ])
  },
})

/** Milliseconds from the request to the first delta frame; the rest is drained */
async function gatewayTurn() {
  fake.reply(REPLY)
  const start = performance.now()
  const response = await fetch(`${http.url}/agent/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-actor-id': 'bench' },
    body: JSON.stringify({ message: 'hi' }),
  })
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let first = Number.NaN
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    if (Number.isNaN(first) && text.includes('"delta"')) first = performance.now() - start
  }
  return first
}

/** The same reply read straight through the AI SDK */
async function directTurn() {
  fake.reply(REPLY)
  const start = performance.now()
  const result = streamText({ model, prompt: 'hi', maxRetries: 0 })
  let first = Number.NaN
  for await (const part of result.stream) {
    if (part.type === 'text-delta' && Number.isNaN(first)) first = performance.now() - start
  }
  return first
}

async function measure(turn: () => Promise<number>) {
  for (let index = 0; index < WARMUP; index++) await turn()
  const values: number[] = []
  for (let index = 0; index < RUNS; index++) values.push(await turn())
  return values
}

try {
  // Interleaved halves so a noisy moment colours both sides alike
  const direct = [...(await measure(directTurn))]
  const gateway = [...(await measure(gatewayTurn))]
  direct.push(...(await measure(directTurn)))
  gateway.push(...(await measure(gatewayTurn)))
  const row = (name: string, values: number[]) => ({
    path: name,
    p50: figure(percentile(values, 50), ' ms'),
    p99: figure(percentile(values, 99), ' ms'),
  })
  printTable(`Time to first delta, ${RUNS * 2} turns each (SQLite, OpenAI wire on loopback)`, [
    row('AI SDK streamText (baseline)', direct),
    row('gateway POST /agent/chat', gateway),
    {
      path: 'ratio gateway / baseline',
      p50: figure(percentile(gateway, 50) / percentile(direct, 50), 'x'),
      p99: figure(percentile(gateway, 99) / percentile(direct, 99), 'x'),
    },
  ])
} finally {
  await http.close()
  await fake.close()
  await rm(directory, { recursive: true, force: true })
}
