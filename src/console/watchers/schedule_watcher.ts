import type { TracingChannel } from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import { MAX_STACK_LINES } from './exception_watcher.ts'
import { errorOf } from './jobs_watcher.ts'

/** What `traceScheduledTask` (or any scheduler) publishes on `atrium.schedule.run` */
interface ScheduleRunMessage {
  name?: unknown
  expression?: unknown
  scheduler?: unknown
  /** Set by the tracing channel when the run rejected */
  error?: unknown
}

/** A run between its start and its end */
interface Started {
  at: number
  startedAt: number
  batch: RecordingBatch
}

/** Longest name, expression or scheduler kept from a message */
const MAX_TEXT = 255

function bounded(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null
  const text = String(value)
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text
}

/**
 * Records each run of a scheduled task from the `atrium.schedule.run`
 * tracing channel: name, expression, scheduler, start, duration, outcome
 * and error. A run gets a batch of its own bound to the channel's start, so
 * what the task records (queries, logs, HTTP calls, jobs it dispatches)
 * joins it; that batch is sampled by `sampling.schedule` unless the run
 * failed or was slow.
 */
export class ScheduleWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #slowMs: number
  #started = new WeakMap<object, Started>()
  #channel?: TracingChannel<any, any>
  #handlers = { asyncEnd: (message: ScheduleRunMessage) => this.#end(message) }

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { slowMs?: number }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#slowMs = options.slowMs ?? 60_000
  }

  install(channel: TracingChannel<any, any>) {
    this.#channel = channel
    channel.subscribe(this.#handlers as any)
    channel.start.bindStore(batchStorage, (message) => this.#open(message as ScheduleRunMessage))
  }

  uninstall() {
    if (!this.#channel) return
    this.#channel.unsubscribe(this.#handlers as any)
    this.#channel.start.unbindStore(batchStorage)
    this.#channel = undefined
  }

  /** The store the task runs in: a new batch, or the console's own one left as it is */
  #open(message: ScheduleRunMessage) {
    const current = batchStorage.getStore()
    if (current?.ignored || !this.#config.enabled || this.#recorder.paused) return current
    if (message === null || typeof message !== 'object') return current
    const batch = this.#recorder.openBatch()
    this.#started.set(message, { at: performance.now(), startedAt: Date.now(), batch })
    return batch
  }

  #end(message: ScheduleRunMessage) {
    const started = message && typeof message === 'object' ? this.#started.get(message) : undefined
    if (!started) return
    this.#started.delete(message)
    try {
      const durationMs = performance.now() - started.at
      const slow = durationMs >= this.#slowMs
      const error = errorOf(message.error)
      const status = error ? 'failed' : 'succeeded'
      const name = bounded(message.name) ?? 'unnamed task'
      const tags: string[] = [status]
      if (slow) tags.push('slow')
      let summary = `task ${name} ${status} ${Math.round(durationMs)} ms`
      if (error) summary += `: ${error.message}`
      const { batch } = started
      this.#recorder.record(
        {
          id: batch.id,
          type: 'schedule',
          summary: summary.slice(0, 255),
          status: null,
          method: null,
          durationMs,
          slow,
          tags,
          content: {
            name,
            expression: bounded(message.expression),
            scheduler: bounded(message.scheduler),
            startedAt: new Date(started.startedAt).toISOString(),
            status,
            durationMs,
            error: error ? redactValue(error.message, this.#config.redact) : null,
            errorClass: error ? error.name : null,
            stack: error?.stack
              ? error.stack.split('\n').slice(0, MAX_STACK_LINES).join('\n')
              : null,
          },
        },
        batch
      )
      this.#recorder.commit(batch, { failing: !!error || slow, sampledAs: 'schedule' })
    } catch {
      // recording never fails a task
    }
  }
}
