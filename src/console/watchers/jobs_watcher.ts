import type { TracingChannel } from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { ConsoleRecorder, NewEntry } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import { MAX_STACK_LINES } from './exception_watcher.ts'

/** A job as `@boringnode/queue` passes it on its channels (the fields read here) */
interface QueuedJob {
  id: string
  name: string
  payload?: unknown
  attempts: number
  priority?: number
  groupId?: string
}

/** What `@boringnode/queue` publishes on `boringqueue.job.dispatch` */
export interface JobDispatchMessage {
  jobs: QueuedJob[]
  queue: string
  delay?: number
  dedupOutcome?: 'added' | 'skipped' | 'replaced' | 'extended'
  error?: unknown
}

/** What `@boringnode/queue` publishes on `boringqueue.job.execute`; the outcome is set at asyncEnd */
export interface JobExecuteMessage {
  job: QueuedJob
  queue: string
  status?: 'completed' | 'failed' | 'retrying'
  duration?: number
  error?: unknown
  nextRetryAt?: Date
}

/** The two tracing channels of `@boringnode/queue` */
export interface QueueTracingChannels {
  dispatchChannel: TracingChannel<any, any>
  executeChannel: TracingChannel<any, any>
}

/** A dispatch or an execution between its start and its end */
interface Started {
  at: number
  batch: RecordingBatch | undefined
}

/**
 * Records `@adonisjs/queue` (`@boringnode/queue`) jobs from its two tracing
 * channels. A dispatch runs in the caller's async context, so its entry joins
 * the dispatching request's batch. An execution runs outside any request: the
 * watcher binds a batch of its own to the execute channel, so what the job
 * records (queries, logs, HTTP calls) joins its execution, and that batch is
 * sampled by `sampling.job` unless it failed, retried or was slow. Payloads
 * are recorded only with `payloads: true`, redacted and bounded.
 */
export class JobsWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #slowMs: number
  #payloads: boolean
  #started = new WeakMap<object, Started>()
  #channels?: QueueTracingChannels
  #dispatchHandlers = {
    start: (message: JobDispatchMessage) => this.#startDispatch(message),
    asyncEnd: (message: JobDispatchMessage) => this.#endDispatch(message),
  }
  #executeHandlers = {
    asyncEnd: (message: JobExecuteMessage) => this.#endExecution(message),
  }

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { slowMs?: number; payloads?: boolean }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#slowMs = options.slowMs ?? 1000
    this.#payloads = options.payloads === true
  }

  /** Subscribes to both channels and binds each execution to a batch of its own */
  install(channels: QueueTracingChannels) {
    this.#channels = channels
    channels.dispatchChannel.subscribe(this.#dispatchHandlers as any)
    channels.executeChannel.subscribe(this.#executeHandlers as any)
    channels.executeChannel.start.bindStore(batchStorage, (message) =>
      this.#openExecution(message as JobExecuteMessage)
    )
  }

  uninstall() {
    if (!this.#channels) return
    this.#channels.dispatchChannel.unsubscribe(this.#dispatchHandlers as any)
    this.#channels.executeChannel.unsubscribe(this.#executeHandlers as any)
    this.#channels.executeChannel.start.unbindStore(batchStorage)
    this.#channels = undefined
  }

  #recording(batch: RecordingBatch | undefined) {
    return !batch?.ignored && this.#config.enabled && !this.#recorder.paused
  }

  #startDispatch(message: JobDispatchMessage) {
    const batch = batchStorage.getStore()
    if (!this.#recording(batch)) return
    this.#started.set(message, { at: performance.now(), batch })
  }

  /** The store the job runs in: a new batch, or the console's own one left as it is */
  #openExecution(message: JobExecuteMessage) {
    const current = batchStorage.getStore()
    if (!this.#recording(current)) return current
    const batch = this.#recorder.openBatch()
    this.#started.set(message, { at: performance.now(), batch })
    return batch
  }

  #endDispatch(message: JobDispatchMessage) {
    const started = this.#started.get(message)
    if (!started) return
    this.#started.delete(message)
    try {
      const durationMs = performance.now() - started.at
      const slow = durationMs >= this.#slowMs
      const [first] = message.jobs
      const name = first?.name ?? 'unknown'
      const count = message.jobs.length
      const outcome = message.dedupOutcome
      const error = errorOf(message.error)
      const tags = ['dispatch']
      if (outcome && outcome !== 'added') tags.push(outcome)
      if (slow) tags.push('slow')
      if (error) tags.push('failed')
      const content: Record<string, unknown> = {
        kind: 'dispatch',
        name,
        jobIds: message.jobs.map((job) => job.id),
        queue: message.queue,
        delayMs: message.delay ?? null,
        dedupOutcome: outcome ?? null,
        error: error ? redactValue(error.message, this.#config.redact) : null,
      }
      if (this.#payloads) {
        content.payloads = message.jobs.map((job) => redactValue(job.payload, this.#config.redact))
      }
      const words = [`dispatch ${name}`]
      if (count > 1) words.push(`x${count}`)
      words.push(`to ${message.queue}`)
      if (message.delay !== undefined) words.push(`delayed ${message.delay} ms`)
      if (outcome && outcome !== 'added') words.push(outcome)
      if (error) words.push(`failed: ${error.message}`)
      this.#record(
        { type: 'job', summary: words.join(' '), durationMs, slow, tags, content },
        started.batch,
        !!error
      )
    } catch {
      // recording never fails a dispatch
    }
  }

  #endExecution(message: JobExecuteMessage) {
    const started = this.#started.get(message)
    if (!started) return
    this.#started.delete(message)
    try {
      const durationMs = message.duration ?? performance.now() - started.at
      const slow = durationMs >= this.#slowMs
      const error = errorOf(message.error)
      // a throw outside the job's own code (completing it in the store) leaves no status
      const status = message.status ?? (error ? 'failed' : 'completed')
      const { job } = message
      const tags: string[] = [status]
      if (slow) tags.push('slow')
      const content: Record<string, unknown> = {
        kind: 'execution',
        name: job.name,
        jobId: job.id,
        queue: message.queue,
        attempt: job.attempts + 1,
        status,
        durationMs,
        error: error ? redactValue(error.message, this.#config.redact) : null,
        errorClass: error ? error.name : null,
        stack: error?.stack ? error.stack.split('\n').slice(0, MAX_STACK_LINES).join('\n') : null,
        nextRetryAt: message.nextRetryAt?.toISOString() ?? null,
      }
      if (this.#payloads) content.payload = redactValue(job.payload, this.#config.redact)
      let summary = `job ${job.name} ${status} ${Math.round(durationMs)} ms`
      if (job.attempts > 0) summary += ` (attempt ${job.attempts + 1})`
      if (error) summary += `: ${error.message}`
      const batch = started.batch!
      this.#recorder.record(
        {
          id: batch.id,
          type: 'job',
          summary: summary.slice(0, 255),
          durationMs,
          slow,
          tags,
          content,
          ...NO_HTTP,
        },
        batch
      )
      this.#recorder.commit(batch, { failing: status !== 'completed' || slow, sampledAs: 'job' })
    } catch {
      // recording never fails a job
    }
  }

  /**
   * Into the caller's batch; outside any, into a batch of its own so a failed
   * dispatch is kept like a failed execution
   */
  #record(
    entry: Omit<NewEntry, 'status' | 'method'>,
    batch: RecordingBatch | undefined,
    failing: boolean
  ) {
    const full = { ...entry, summary: entry.summary.slice(0, 255), ...NO_HTTP }
    if (batch) return this.#recorder.record(full, batch)
    const own = this.#recorder.openBatch()
    this.#recorder.record({ ...full, id: own.id }, own)
    this.#recorder.commit(own, { failing: failing || entry.slow, sampledAs: 'job' })
  }
}

const NO_HTTP = { status: null, method: null }

/** The error a channel message carries: its class, message and stack */
export function errorOf(error: unknown): { name: string; message: string; stack?: string } | null {
  if (error === undefined || error === null) return null
  if (typeof error !== 'object') return { name: 'Error', message: String(error) }
  const err = error as { message?: unknown; stack?: unknown; constructor?: { name?: string } }
  const name = err.constructor?.name
  return {
    name: name && name !== 'Object' ? name : 'Error',
    message: String(err.message ?? ''),
    stack: typeof err.stack === 'string' ? err.stack : undefined,
  }
}
