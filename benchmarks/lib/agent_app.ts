/**
 * What the agent benchmarks share: a SQLite database in WAL mode with the
 * agent tables, the loopback fake model in a process of its own, and gateway
 * apps on a real HTTP server reading that model through the real AI SDK
 * provider.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { Database } from '@adonisjs/lucid/database'
import { LoggerFactory } from '@adonisjs/core/factories/logger'
import { Emitter } from '@adonisjs/core/events'
import { AppFactory } from '@adonisjs/core/factories/app'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { connectionConfig } from '../../tests/helpers.ts'
import { migrateStubs } from '../../tests/migration_stubs.ts'
import type { FakeReply } from '../../tests/agent/fake_model.ts'
import { useBodyParser } from '../../tests/agent/helpers.ts'
import { actors, defineConfig, type AgentConfigInput } from '../../src/agent/main.ts'
import { bootHttpApp } from './http_app.ts'

/**
 * The agent tables in a database of `dialect`: a SQLite file (WAL) in a
 * temporary directory, or a PostgreSQL schema of this process's own
 * (`BENCH_DB=pg`), dropped by `remove()`.
 */
export async function agentDatabase(dialect: 'sqlite' | 'pg' = 'sqlite') {
  const directory = await mkdtemp(join(tmpdir(), 'atrium-agent-bench-'))
  const config: any = connectionConfig(dialect, directory)
  const schema = `bench_agent_${process.pid}`
  if (dialect === 'sqlite') {
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
  const database = { connection: dialect, connections: { [dialect]: config } }
  const open = () =>
    new Database(
      database as any,
      new LoggerFactory().create(),
      new Emitter(new AppFactory().create(pathToFileURL(`${directory}/`)))
    )
  const schemaDb = open()
  if (dialect === 'pg') await schemaDb.rawQuery(`create schema if not exists "${schema}"`)
  await migrateStubs(schemaDb, 'agent')
  await schemaDb.manager.closeAll()
  return {
    directory,
    database,
    async remove() {
      if (dialect === 'pg') {
        const db = open()
        await db.rawQuery(`drop schema if exists "${schema}" cascade`)
        await db.manager.closeAll()
      }
      await rm(directory, { recursive: true, force: true })
    },
  }
}

/**
 * The fake model of tests/agent/fake_model.ts in its own process
 * (benchmarks/lib/agent_fake_model_process.ts), as a real model API is.
 */
export async function fakeModelProcess(reply?: FakeReply, turns?: number) {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('./agent_fake_model_process.ts', import.meta.url)),
    reply ? [JSON.stringify(reply), String(turns ?? 10_000)] : [],
    { execArgv: ['--import=@poppinss/ts-exec'] }
  )
  const [{ url }] = (await once(child, 'message')) as [{ url: string }]
  return {
    url,
    /** Queues more replies, answered in order */
    async reply(...replies: FakeReply[]) {
      child.send({ replies })
      await once(child, 'message')
    },
    /** The process's id, to read its CPU time (process_cpu.ts) */
    pid: child.pid,
    close: () => child.kill(),
  }
}

/** The AI SDK model the gateway and the direct baseline both use */
export function fakeModel(modelUrl: string) {
  return createOpenAICompatible({
    name: 'fake',
    baseURL: `${modelUrl}/v1`,
    apiKey: 'test-key',
    includeUsage: true,
  })('fake-model')
}

/** A gateway app on its own HTTP server: the header actor resolver, no retries */
export function gatewayApp(
  database: { directory: string; database: Record<string, unknown> },
  modelUrl: string,
  config: Partial<AgentConfigInput> = {}
) {
  return bootHttpApp({
    appRoot: pathToFileURL(`${database.directory}/`),
    providers: [
      () => import('@adonisjs/lucid/database_provider'),
      () => import('../../providers/agent_provider.ts'),
    ],
    config: {
      database: database.database,
      agent: defineConfig({
        model: fakeModel(modelUrl),
        actorResolver: actors.header(),
        modelMaxRetries: 0,
        ...config,
      }),
    },
    routes: useBodyParser,
  })
}
