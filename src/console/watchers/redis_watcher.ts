import { performance } from 'node:perf_hooks'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import { redisArguments } from './redis_arguments.ts'

/** What the watcher touches of an ioredis `Command` */
interface RedisCommand {
  name: string
  args: unknown[]
  resolve: (value: unknown) => void
  reject: (error: Error) => void
}

/** An ioredis client (or cluster) as `@adonisjs/redis` holds it */
interface IoClient {
  sendCommand: (command: RedisCommand, ...rest: unknown[]) => unknown
}

/** What the watcher touches of `@adonisjs/redis`' manager and connections */
export interface RedisManagerLike {
  activeConnections: Record<string, { connectionName: string; ioConnection: IoClient }>
  connection(name?: string): { connectionName: string; ioConnection: IoClient }
}

/**
 * Records the commands sent through `@adonisjs/redis` connections: name,
 * arguments (written values replaced by their length, see
 * redis_arguments.ts), connection, duration and error.
 *
 * It wraps each watched connection's `sendCommand` and the command's own
 * `resolve`/`reject`: one closure call per command, no extra promise and no
 * extra connection. `MONITOR` would open a second connection, make Redis
 * stream every client's commands back to the app (load on Redis and on the
 * event loop) and lose which request sent them; the `adonisjs.redis.command`
 * tracing channel costs a traced promise per command and does not say which
 * connection sent it.
 */
export class RedisWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #slowMs: number
  #connections?: string[]
  #manager?: RedisManagerLike
  #connect?: RedisManagerLike['connection']
  #wrapped: { client: IoClient; original: IoClient['sendCommand']; wrapper: unknown }[] = []
  /** Clients already looked at: the manager's proxies call `connection()` for every command */
  #seen = new WeakSet<IoClient>()

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { slowMs?: number; connections?: string[] }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#slowMs = options.slowMs ?? 100
    this.#connections = options.connections
  }

  /** Watches the open connections, and those the manager opens later */
  install(manager: RedisManagerLike) {
    this.#manager = manager
    for (const connection of Object.values(manager.activeConnections)) this.#attach(connection)
    const connect = manager.connection
    this.#connect = connect
    const watcher = this
    manager.connection = function (this: RedisManagerLike, name?: string) {
      const connection = connect.call(this, name)
      watcher.#attach(connection)
      return connection
    }
  }

  uninstall() {
    for (const { client, original, wrapper } of this.#wrapped) {
      if (client.sendCommand === wrapper) client.sendCommand = original
    }
    this.#wrapped = []
    this.#seen = new WeakSet()
    if (this.#manager && this.#connect) this.#manager.connection = this.#connect
    this.#manager = undefined
  }

  #attach(connection: { connectionName: string; ioConnection: IoClient }) {
    const client = connection?.ioConnection
    if (!client || this.#seen.has(client)) return
    this.#seen.add(client)
    const name = connection.connectionName
    if (this.#connections && !this.#connections.includes(name)) return
    const original = client.sendCommand
    const watcher = this
    const wrapper = function (this: IoClient, command: RedisCommand, ...rest: unknown[]) {
      watcher.#watch(name, command)
      return original.call(this, command, ...rest)
    }
    client.sendCommand = wrapper
    this.#wrapped.push({ client, original, wrapper })
  }

  /** Hooks the command's settlement; the batch is the sender's, read now */
  #watch(connection: string, command: RedisCommand) {
    const batch = batchStorage.getStore()
    if (batch?.ignored || !this.#config.enabled || this.#recorder.paused) return
    if (typeof command?.resolve !== 'function' || typeof command.reject !== 'function') return
    const at = performance.now()
    const resolve = command.resolve
    const reject = command.reject
    command.resolve = (value) => {
      this.record(connection, command, performance.now() - at, batch)
      resolve(value)
    }
    command.reject = (error) => {
      this.record(connection, command, performance.now() - at, batch, error)
      reject(error)
    }
  }

  /** Records one command; never throws */
  record(
    connection: string,
    command: { name: string; args: unknown[] },
    durationMs: number,
    batch: RecordingBatch | undefined,
    error?: Error
  ) {
    try {
      const name = String(command.name).toUpperCase()
      const args = redisArguments(name, command.args ?? [])
      const slow = durationMs >= this.#slowMs
      const tags: string[] = []
      if (slow) tags.push('slow')
      if (error) tags.push('error')
      this.#recorder.record(
        {
          type: 'redis',
          summary: [name, ...args].join(' ').slice(0, 255),
          status: null,
          method: null,
          durationMs,
          slow,
          tags,
          content: {
            command: name,
            args,
            connection,
            timeMs: durationMs,
            error: error ? String(error.message) : null,
          },
        },
        batch
      )
    } catch {
      // recording never fails a command
    }
  }
}
