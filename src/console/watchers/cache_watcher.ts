import type { TracingChannel } from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

/** What Bentocache publishes on `bentocache.cache.operation` for each operation */
export interface CacheOperationMessage {
  operation: string
  key?: string
  keys?: string[]
  store: string
  hit?: boolean
  tier?: string
  graced?: boolean
  error?: unknown
}

/** An operation between its start and its end */
interface Started {
  at: number
  batch: RecordingBatch | undefined
  value?: unknown
  valueSeen: boolean
}

/** The app emitter, as far as the `values` option needs it */
interface Emitter {
  on(event: string, listener: (data: any) => void): () => void
}

/**
 * Records `@adonisjs/cache` (Bentocache) operations from its
 * `bentocache.cache.operation` tracing channel: operation, key, store, hit
 * or miss, tier, duration, error. The channel runs in the caller's async
 * context, so an operation made during a request joins its batch; without
 * subscribers Bentocache skips it, so an app without this watcher pays
 * nothing. Values are never recorded unless `values: true`, which reads them
 * from the `cache:hit` / `cache:written` events of the app emitter (redacted
 * and bounded like a request body).
 */
export class CacheWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #slowMs: number
  #values: boolean
  #started = new WeakMap<object, Started>()
  /** Operations running now per store, for the `values` events */
  #running = new Map<string, Map<CacheOperationMessage, Started>>()
  #channel?: TracingChannel<any, any>
  #handlers = {
    start: (message: CacheOperationMessage) => this.#start(message),
    asyncEnd: (message: CacheOperationMessage) => this.#end(message),
  }
  #unsubscribe: (() => void)[] = []

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { values?: boolean; slowMs?: number }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#slowMs = options.slowMs ?? 100
    this.#values = options.values === true
  }

  /** Subscribes to Bentocache's channel (and with `values`, to the emitter's cache events) */
  install(channel: TracingChannel<any, any>, emitter?: Emitter) {
    this.#channel = channel
    channel.subscribe(this.#handlers as any)
    if (this.#values && emitter) {
      for (const event of ['cache:hit', 'cache:written']) {
        this.#unsubscribe.push(emitter.on(event, (data) => this.#value(data)))
      }
    }
  }

  uninstall() {
    this.#channel?.unsubscribe(this.#handlers as any)
    this.#channel = undefined
    for (const unsubscribe of this.#unsubscribe) unsubscribe()
    this.#unsubscribe = []
    this.#running.clear()
  }

  #start(message: CacheOperationMessage) {
    const batch = batchStorage.getStore()
    if (batch?.ignored || !this.#config.enabled || this.#recorder.paused) return
    const started: Started = { at: performance.now(), batch, valueSeen: false }
    this.#started.set(message, started)
    if (this.#values) {
      let running = this.#running.get(message.store)
      if (!running) this.#running.set(message.store, (running = new Map()))
      running.set(message, started)
    }
  }

  /** A `cache:hit` or `cache:written` event: its value goes to the running operation on that key */
  #value(data: { key?: string; store?: string; value?: unknown }) {
    const running = data?.store === undefined ? undefined : this.#running.get(data.store)
    if (!running || typeof data.key !== 'string') return
    for (const [message, started] of running) {
      if (message.key === data.key || message.key?.endsWith(`:${data.key}`)) {
        started.value = data.value
        started.valueSeen = true
        return
      }
    }
  }

  #end(message: CacheOperationMessage) {
    const started = this.#started.get(message)
    if (!started) return
    this.#started.delete(message)
    this.#running.get(message.store)?.delete(message)
    this.record(message, performance.now() - started.at, started)
  }

  /** Records one operation; never throws */
  record(message: CacheOperationMessage, durationMs: number, started: Started) {
    try {
      const slow = durationMs >= this.#slowMs
      const error = message.error
      const tags: string[] = []
      if (message.hit === true) tags.push('hit')
      else if (message.hit === false) tags.push('miss')
      if (slow) tags.push('slow')
      if (error) tags.push('error')
      const key = message.key ?? message.keys?.join(', ') ?? ''
      const outcome = message.hit === true ? ' hit' : message.hit === false ? ' miss' : ''
      const content: Record<string, unknown> = {
        operation: message.operation,
        key: redactValue(key, this.#config.redact),
        store: message.store,
        hit: message.hit ?? null,
        tier: message.tier ?? null,
        graced: message.graced ?? null,
        timeMs: durationMs,
        error: error ? String((error as Error).message ?? error) : null,
      }
      if (this.#values && started.valueSeen) {
        content.value = redactValue(started.value, this.#config.redact)
      }
      this.#recorder.record(
        {
          type: 'cache',
          summary: `${message.operation} ${key}${outcome}`.slice(0, 255),
          status: null,
          method: null,
          durationMs,
          slow,
          tags,
          content,
        },
        started.batch
      )
    } catch {
      // recording never fails a cache operation
    }
  }
}
