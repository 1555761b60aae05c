import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import debug from '../debug.ts'
import type { RunEventLog, RunFrame, RunReader } from '../run_log.ts'
import {
  LAPSED_FRAME,
  LAPSE_SCRIPT,
  RENEW_SCRIPT,
  entryFrame,
  isTerminal,
  messageFrame,
  seqOf,
} from './redis_encoding.ts'

export interface RedisSinkOptions {
  /** Key and channel prefix (`atrium:agent:`) */
  prefix: string
  /** A run whose instance stops renewing its lease for this long is failed by its readers */
  leaseMs: number
  maxFrames: number
  retainFinishedMs: number
}

/** What another instance asks of the instance running a run */
export type ControlMessage =
  | { type: 'cancel'; runId: string }
  | { type: 'decision'; runId: string; toolCallId: string; approved: boolean; reason?: string }

/** What the producing instance hears about its own run */
export interface ProducerHooks {
  /** Another instance asked for a cancel */
  onCancel(): void
  /** Readers declared the run dead (its lease lapsed): stop working on it */
  onLeaseLost(): void
}

/**
 * The run log in Redis, so any instance can serve any run: the instance
 * running a turn mirrors every frame of its in-memory log into a stream
 * (entry id = frame sequence) and publishes it on the run's channel, under
 * a lease it renews. A reader elsewhere replays the stream, then tails the
 * channel; when the lease lapses it ends the run with `run_failed`.
 * Cancels and approval decisions reach the running instance over one
 * control channel.
 */
export class RedisRunSink {
  readonly instanceId = randomUUID()
  #redis: Redis
  #subscriber: Redis
  #ownsConnection: boolean
  #options: RedisSinkOptions
  #followers = new Map<string, Set<(frame: RunFrame) => void>>()
  #control: (message: ControlMessage) => void = () => {}
  #timers = new Set<NodeJS.Timeout>()
  #pending = new Set<Promise<unknown>>()
  /** Every run in flight on any instance, scored by when its lease runs out */
  #leasesKey: string
  #report: (error: unknown, operation: string) => void

  private constructor(
    redis: Redis,
    subscriber: Redis,
    options: RedisSinkOptions,
    ownsConnection: boolean,
    report: (error: unknown, operation: string) => void
  ) {
    this.#redis = redis
    this.#subscriber = subscriber
    this.#options = options
    this.#ownsConnection = ownsConnection
    this.#report = report
    this.#leasesKey = `${options.prefix}runs:leases`
  }

  /**
   * A sink on `redis`, with its own subscriber connection. `ownsConnection`
   * closes `redis` too on shutdown (the `url` fallback).
   */
  static async connect(
    redis: Redis,
    options: RedisSinkOptions,
    ownsConnection: boolean,
    report: (error: unknown, operation: string) => void
  ) {
    const subscriber = redis.duplicate()
    subscriber.on('error', (error) => report(error, 'subscriber'))
    const sink = new RedisRunSink(redis, subscriber, options, ownsConnection, report)
    subscriber.on('message', (channel: string, message: string) =>
      sink.#onMessage(channel, message)
    )
    await subscriber.subscribe(sink.#controlChannel)
    return sink
  }

  get #controlChannel() {
    return `${this.#options.prefix}control`
  }

  #keys(runId: string) {
    const base = `${this.#options.prefix}run:${runId}`
    return {
      stream: `${base}:log`,
      lease: `${base}:lease`,
      cancel: `${base}:cancel`,
      channel: base,
    }
  }

  /** Handles cancels and decisions other instances send */
  onControl(handler: (message: ControlMessage) => void) {
    this.#control = handler
  }

  #onMessage(channel: string, message: string) {
    if (channel === this.#controlChannel) {
      try {
        this.#control(JSON.parse(message))
      } catch (error) {
        this.#report(error, 'control')
      }
      return
    }
    const listeners = this.#followers.get(channel)
    if (!listeners) return
    const frame = messageFrame(message)
    if (!frame) return
    for (const listener of listeners) listener(frame)
  }

  /** Tracks a write so shutdown can wait for it; failures are reported, never thrown */
  #track(operation: string, write: Promise<unknown>) {
    const tracked = write.catch((error) => this.#report(error, operation))
    this.#pending.add(tracked)
    tracked.finally(() => this.#pending.delete(tracked))
    return tracked
  }

  /**
   * Mirrors a run's in-memory log into Redis under this instance's lease,
   * from the frames it already has on. Returns the function that stops it.
   */
  produce(log: RunEventLog, hooks: ProducerHooks) {
    const keys = this.#keys(log.runId)
    const { leaseMs, maxFrames, retainFinishedMs } = this.#options
    let stopped = false
    const write = (frame: RunFrame) => {
      const data = JSON.stringify(frame.data)
      const pipeline = this.#redis
        .pipeline()
        .xadd(
          keys.stream,
          'MAXLEN',
          '~',
          maxFrames,
          `${frame.seq}-0`,
          'e',
          frame.event ?? '',
          'd',
          data
        )
        .publish(keys.channel, `${frame.seq}\n${frame.event ?? ''}\n${data}`)
      if (isTerminal(frame)) {
        pipeline
          .pexpire(keys.stream, retainFinishedMs)
          .del(keys.lease)
          .zrem(this.#leasesKey, log.runId)
      }
      this.#track(
        'append',
        pipeline.exec().then((results) => {
          const failed = results?.find(([error]) => error)?.[0]
          if (!failed) return
          // Readers ended the run after its lease lapsed: this instance lost it
          if (/equal or smaller/i.test(failed.message)) hooks.onLeaseLost()
          throw failed
        })
      )
      if (isTerminal(frame)) stop()
    }
    const renew = setInterval(
      () => {
        this.#track(
          'lease',
          this.#redis
            .eval(
              RENEW_SCRIPT,
              4,
              keys.lease,
              keys.cancel,
              keys.stream,
              this.#leasesKey,
              this.instanceId,
              leaseMs,
              Date.now() + leaseMs,
              log.runId
            )
            .then((answer) => {
              if (answer === -1) hooks.onLeaseLost()
              else if (answer === 1) hooks.onCancel()
            })
        )
      },
      Math.max(50, Math.floor(leaseMs / 3))
    )
    renew.unref()
    this.#timers.add(renew)
    const stop = () => {
      if (stopped) return
      stopped = true
      clearInterval(renew)
      this.#timers.delete(renew)
      log.onAppend = undefined
    }
    this.#track(
      'lease',
      this.#redis
        .multi()
        .set(keys.lease, this.instanceId, 'PX', leaseMs)
        .zadd(this.#leasesKey, Date.now() + leaseMs, log.runId)
        .exec()
    )
    for (const frame of log.frames()) write(frame)
    if (!stopped) log.onAppend = write
    return stop
  }

  /**
   * A reader of a run another instance may be running, or null when Redis
   * holds no frames of it (never run with this sink, or expired).
   * `onLapse` runs once when this reader ends the run for a lapsed lease.
   */
  async reader(runId: string, onLapse: () => Promise<void>): Promise<RunReader | null> {
    const keys = this.#keys(runId)
    const first = (await this.#redis.xrange(keys.stream, '-', '+', 'COUNT', 1)) as Array<
      [string, string[]]
    >
    if (!first.length) return null
    const last = (await this.#redis.xrevrange(keys.stream, '+', '-', 'COUNT', 1)) as Array<
      [string, string[]]
    >
    return {
      firstKept: seqOf(first[0][0]),
      lastSeq: seqOf(last[0]?.[0] ?? first[0][0]),
      follow: (after, listener) => this.#follow(runId, after, listener, onLapse),
    }
  }

  #follow(
    runId: string,
    after: number,
    listener: (frame: RunFrame | null) => void,
    onLapse: () => Promise<void>
  ): () => void {
    const keys = this.#keys(runId)
    let emit = listener
    let delivered = after
    let ended = false
    // Every step runs in order: replay, live frames, gap fills, lease checks
    let chain: Promise<void> = Promise.resolve()
    const enqueue = (step: () => Promise<void> | void) => {
      chain = chain
        .then(() => (ended ? undefined : step()))
        .catch((error) => {
          this.#report(error, 'read')
          end()
        })
    }
    const deliver = (frame: RunFrame) => {
      if (ended || frame.seq <= delivered) return
      delivered = frame.seq
      emit(frame)
      if (isTerminal(frame)) end()
    }
    const fill = async () => {
      const entries = (await this.#redis.xrange(keys.stream, `${delivered + 1}`, '+')) as Array<
        [string, string[]]
      >
      for (const entry of entries) deliver(entryFrame(entry))
    }
    const onFrame = (frame: RunFrame) =>
      enqueue(() => (frame.seq === delivered + 1 ? deliver(frame) : fill()))
    const watchdog = setInterval(
      () =>
        enqueue(async () => {
          // Also a poll: a frame whose message was missed is read from the stream
          await fill()
          if (ended || (await this.#redis.exists(keys.lease))) return
          await fill()
          if (ended) return
          const seq = await this.#redis.eval(
            LAPSE_SCRIPT,
            3,
            keys.stream,
            keys.lease,
            keys.channel,
            LAPSED_FRAME,
            this.#options.retainFinishedMs
          )
          if (seq) {
            debug('run %s: lease lapsed, ended as run_failed', runId)
            await onLapse()
          }
          await fill()
        }),
      Math.max(50, Math.floor(this.#options.leaseMs / 2))
    )
    watchdog.unref()
    const end = () => {
      if (ended) return
      ended = true
      clearInterval(watchdog)
      const listeners = this.#followers.get(keys.channel)
      listeners?.delete(onFrame)
      if (listeners && !listeners.size) {
        this.#followers.delete(keys.channel)
        this.#track('unsubscribe', this.#subscriber.unsubscribe(keys.channel))
      }
      emit(null)
    }

    let listeners = this.#followers.get(keys.channel)
    const subscribe = !listeners
    if (!listeners) this.#followers.set(keys.channel, (listeners = new Set()))
    listeners.add(onFrame)
    // Subscribed before the replay, so no frame falls between the two
    if (subscribe) enqueue(async () => void (await this.#subscriber.subscribe(keys.channel)))
    enqueue(fill)
    return () => {
      if (ended) return
      emit = () => {}
      end()
    }
  }

  /**
   * Ends the runs whose instance stopped renewing their lease, also when no
   * reader ever comes back for them: every `leaseMs`, the runs whose lease
   * should have been renewed by now are ended with `run_failed` by the same
   * script readers use (the first caller wins, on any instance), and
   * `onLapse` records each run this instance ended. A lease renewed late by
   * a slow clock or a pause is found alive and left alone.
   */
  sweepLapsed(onLapse: (runId: string) => Promise<void>) {
    const sweep = setInterval(() => {
      this.#track('sweep', this.#sweep(onLapse))
    }, this.#options.leaseMs)
    sweep.unref()
    this.#timers.add(sweep)
  }

  async #sweep(onLapse: (runId: string) => Promise<void>) {
    // A bounded batch per round: a backlog is worked through round after round
    const due = await this.#redis.zrangebyscore(
      this.#leasesKey,
      '-inf',
      Date.now(),
      'LIMIT',
      0,
      100
    )
    for (const runId of due) {
      const keys = this.#keys(runId)
      const seq = await this.#redis.eval(
        LAPSE_SCRIPT,
        3,
        keys.stream,
        keys.lease,
        keys.channel,
        LAPSED_FRAME,
        this.#options.retainFinishedMs
      )
      if (seq) {
        debug('run %s: lease lapsed with no reader, ended as run_failed', runId)
        await onLapse(runId)
      }
      // Ended (here, by a reader, or by its own instance) or alive: only a live lease keeps its entry
      if (!(await this.#redis.exists(keys.lease))) await this.#redis.zrem(this.#leasesKey, runId)
    }
  }

  /** Asks the instance running the run to cancel it (a flag it also reads with its lease) */
  async requestCancel(runId: string) {
    const keys = this.#keys(runId)
    await this.#redis
      .multi()
      .set(keys.cancel, '1', 'PX', this.#options.retainFinishedMs)
      .publish(this.#controlChannel, JSON.stringify({ type: 'cancel', runId }))
      .exec()
  }

  /** Tells the instance running the run about a decision taken here */
  async publishDecision(message: Extract<ControlMessage, { type: 'decision' }>) {
    await this.#redis.publish(this.#controlChannel, JSON.stringify(message))
  }

  /** Waits for the writes in flight (shutdown, after the runs recorded their end) */
  async flush() {
    await Promise.allSettled([...this.#pending])
  }

  /** Stops every timer and closes the connections this sink opened */
  close() {
    for (const timer of this.#timers) clearInterval(timer)
    this.#timers.clear()
    this.#subscriber.disconnect()
    if (this.#ownsConnection) this.#redis.disconnect()
  }
}
