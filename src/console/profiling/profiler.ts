import { Session } from 'node:inspector'
import debug from '../debug.ts'
import { entryId } from '../ids.ts'
import type { ConsoleRecorder, NewEntry } from '../recorder.ts'
import { buildFlameTree, flattenFlameTree, sliceProfiles, type CpuProfile } from './flame_tree.ts'
import type { ResolvedProfiling } from './config.ts'

/** Why a capture ran */
export type CaptureTrigger = 'armed' | 'sampled' | 'window'

/** Requests armed by `POST /profiles/arm` */
export interface RequestArming {
  remaining: number
  method?: string
  /** An exact path, or a prefix when it ends with `*` */
  path?: string
  expiresAt: number
}

/** One running capture: a request's, or a time window's */
export class ProfileCapture {
  /** A window's entry id is known when it is armed; a request's is taken after the request's own */
  id: string
  /** Parts of earlier V8 runs this capture overlapped */
  readonly parts: CpuProfile[] = []
  /** Set once V8's run is going: starting it logs every compiled function, which takes a while */
  fromUs = 0
  toUs = 0
  truncatedByDuration = false
  /** Requests in flight when it began, and the request counter then */
  inFlightAtStart = 0
  startedCounter = 0
  otherRequests = 0
  timer?: NodeJS.Timeout
  result?: Promise<NewEntry | null>

  constructor(
    readonly trigger: CaptureTrigger,
    readonly request: { method: string; path: string } | null
  ) {
    this.id = request ? '' : entryId()
  }
}

function nowUs() {
  return Number(process.hrtime.bigint() / 1000n)
}

function matches(arming: RequestArming, method: string, path: string) {
  if (arming.method && arming.method !== method) return false
  if (!arming.path) return true
  return arming.path.endsWith('*')
    ? path.startsWith(arming.path.slice(0, -1))
    : path === arming.path
}

/**
 * CPU profiles through one lazily opened `node:inspector` session. V8 has one
 * profiler per isolate, so captures that overlap share its run: whenever one
 * ends, the run is stopped (its profile handed to every capture still going)
 * and restarted for the others. Each capture keeps only the samples of its
 * own interval, and its entry says how many other requests ran meanwhile,
 * since their work is in those samples too.
 */
export class CpuProfiler {
  #config: ResolvedProfiling
  #recorder: ConsoleRecorder
  #session?: Session
  #running = false
  #active = new Set<ProfileCapture>()
  #pending = new Set<Promise<unknown>>()
  #inFlight = 0
  #requestCounter = 0
  #closed = false
  armed?: RequestArming

  constructor(config: ResolvedProfiling, recorder: ConsoleRecorder) {
    this.#config = config
    this.#recorder = recorder
  }

  /** Captures running now */
  get active() {
    return this.#active.size
  }

  /** True once the inspector session exists (it is opened by the first capture) */
  get sessionOpen() {
    return this.#session !== undefined
  }

  /** Arms the next `count` requests matching `method`/`path` for `ttlMs`; replaces an earlier arming */
  arm(options: { count: number; method?: string; path?: string; ttlMs: number }) {
    this.armed = {
      remaining: options.count,
      method: options.method,
      path: options.path,
      expiresAt: Date.now() + options.ttlMs,
    }
    debug('profiling armed for %d requests', options.count)
    return this.armed
  }

  /** Whether a new capture fits under `maxConcurrent` */
  hasRoom() {
    return this.#active.size < this.#config.maxConcurrent
  }

  /**
   * Called by the request watcher for every request: counts it, and starts a
   * capture when an arming matches or the sample rate picks it.
   * `eligible` is false for the console's own requests.
   */
  enter(method: string, path: string, eligible: boolean): ProfileCapture | undefined {
    this.#inFlight++
    this.#requestCounter++
    if (!eligible || this.#closed || !this.hasRoom()) return undefined
    let trigger: CaptureTrigger | undefined
    const arming = this.armed
    if (arming && arming.expiresAt <= Date.now()) this.armed = undefined
    else if (arming && matches(arming, method, path)) {
      trigger = 'armed'
      if (--arming.remaining <= 0) this.armed = undefined
    }
    if (!trigger && this.#config.sampleRate > 0 && Math.random() < this.#config.sampleRate) {
      trigger = 'sampled'
    }
    if (!trigger) return undefined
    return this.#begin(new ProfileCapture(trigger, { method, path }), true)
  }

  /** Called when a request ends: its capture (if any) stops */
  leave(capture: ProfileCapture | undefined) {
    this.#inFlight--
    if (capture) void this.#end(capture)
  }

  /** Stops a capture (once; later calls share the result): its entry, or null when discarded */
  finish(capture: ProfileCapture): Promise<NewEntry | null> {
    return this.#end(capture)
  }

  /**
   * Profiles everything for `windowMs`; the entry is recorded on its own
   * (no request's batch) under the returned id. `fromRequest`: called while
   * handling a request (the arm route), which is not counted as one of the window's.
   */
  captureWindow(windowMs: number, options: { fromRequest?: boolean } = {}): ProfileCapture {
    // the arming request is in flight, but it is no request of the window
    const capture = this.#begin(new ProfileCapture('window', null), options.fromRequest === true)
    clearTimeout(capture.timer)
    capture.timer = setTimeout(() => void this.#end(capture), windowMs)
    capture.timer.unref()
    return capture
  }

  #begin(capture: ProfileCapture, isRequest: boolean) {
    // this request is in flight already: it is not one of the "others"
    capture.inFlightAtStart = this.#inFlight - (isRequest ? 1 : 0)
    capture.startedCounter = this.#requestCounter
    capture.timer = setTimeout(() => {
      capture.truncatedByDuration = true
      void this.#end(capture)
    }, this.#config.maxDurationMs)
    capture.timer.unref()
    try {
      if (!this.#running) this.#start()
      capture.fromUs = nowUs()
      this.#active.add(capture)
      debug('capture %s started (%s)', capture.id, capture.trigger)
    } catch (error) {
      clearTimeout(capture.timer)
      capture.result = Promise.resolve(null)
      debug('capture %s could not start: %s', capture.id, (error as Error).message)
    }
    return capture
  }

  /**
   * Stops V8's run now (the in-process inspector answers synchronously), so
   * the capture ends exactly with its request; the entry is built on a later
   * turn, after the response is on its way.
   */
  #end(capture: ProfileCapture): Promise<NewEntry | null> {
    if (capture.result) return capture.result
    clearTimeout(capture.timer)
    capture.toUs = nowUs()
    capture.otherRequests =
      capture.inFlightAtStart + (this.#requestCounter - capture.startedCounter)
    let built: Promise<NewEntry | null>
    try {
      // every capture still going overlapped this run: each keeps its profile
      const profile = this.#stop()
      if (profile) for (const active of this.#active) active.parts.push(profile)
      this.#active.delete(capture)
      if (this.#active.size > 0) this.#start()
      built = new Promise((resolve) => setImmediate(resolve)).then(() =>
        capture.parts.length > 0 ? this.#entryOf(capture, capture.parts) : null
      )
    } catch (error) {
      this.#active.delete(capture)
      built = Promise.reject(error)
    }
    const result = built.catch((error) => {
      debug('capture %s failed: %s', capture.id, error?.message)
      return null
    })
    capture.result = result
    this.#pending.add(result)
    void result.finally(() => this.#pending.delete(result))
    // a window belongs to no request: its entry is recorded on its own
    if (!capture.request) {
      void result.then((entry) => entry && this.#recorder.record(entry, null))
    }
    return result
  }

  /** One inspector call; an in-process session answers before `post` returns */
  #post(method: string, params?: object): any {
    if (!this.#session) {
      const session = new Session()
      session.connect()
      this.#session = session
      debug('inspector session opened')
      this.#post('Profiler.enable')
      this.#post('Profiler.setSamplingInterval', {
        interval: this.#config.samplingIntervalMicros,
      })
    }
    let answer: { error: Error | null; result?: unknown } | undefined
    this.#session.post(method, params, (error, result) => {
      answer = { error, result }
    })
    if (!answer) throw new Error(`the inspector did not answer ${method} synchronously`)
    if (answer.error) throw answer.error
    return answer.result
  }

  #start() {
    const started = process.hrtime.bigint()
    this.#post('Profiler.start')
    this.#running = true
    // V8 logs every compiled function when it starts: the cost grows with the app
    debug('V8 profiler started in %d ms', Number(process.hrtime.bigint() - started) / 1e6)
  }

  #stop(): CpuProfile | null {
    if (!this.#running) return null
    this.#running = false
    return this.#post('Profiler.stop').profile as CpuProfile
  }

  #entryOf(capture: ProfileCapture, parts: CpuProfile[]): NewEntry | null {
    const durationMs = (capture.toUs - capture.fromUs) / 1000
    if (durationMs < this.#config.minDurationMs) {
      debug('capture %s discarded: %d ms under minDurationMs', capture.id, durationMs)
      return null
    }
    const slice = sliceProfiles(parts, capture.fromUs, capture.toUs, this.#config.maxSamples)
    const { tree, nodes, collapsed } = buildFlameTree(slice.profile, this.#config.maxNodes)
    const raw = this.#config.maxRawBytes > 0 ? JSON.stringify(slice.profile) : ''
    const rawBytes = Buffer.byteLength(raw)
    const keepRaw = rawBytes > 0 && rawBytes <= this.#config.maxRawBytes
    const tags: string[] = [capture.trigger]
    if (capture.truncatedByDuration || slice.truncated) tags.push('truncated')
    if (capture.otherRequests > 0) tags.push('shared')
    const what = capture.request
      ? `${capture.request.method} ${capture.request.path}`
      : `window of ${Math.round(durationMs)} ms`
    capture.id ||= entryId()
    return {
      id: capture.id,
      type: 'cpu_profile',
      summary: `CPU profile: ${what}`.slice(0, 255),
      status: null,
      method: capture.request?.method ?? null,
      durationMs,
      slow: false,
      tags,
      content: {
        trigger: capture.trigger,
        request: capture.request,
        durationMs,
        samplingIntervalMicros: this.#config.samplingIntervalMicros,
        samples: slice.samples,
        otherRequests: capture.otherRequests,
        truncated: capture.truncatedByDuration || slice.truncated,
        frames: flattenFlameTree(tree),
        nodes,
        collapsedNodes: collapsed,
        rawBytes: keepRaw ? rawBytes : null,
        rawDropped: keepRaw ? null : rawBytes > 0 ? `over maxRawBytes (${rawBytes} bytes)` : null,
        raw: keepRaw ? slice.profile : null,
      },
    }
  }

  /** Resolves once every capture that ended has its entry (tests, shutdown) */
  async settled() {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending])
  }

  /** Ends the captures still running, stops V8's profiler and closes the session */
  async shutdown() {
    this.#closed = true
    this.armed = undefined
    for (const capture of [...this.#active]) void this.#end(capture)
    await this.settled()
    this.#session?.disconnect()
    this.#session = undefined
  }
}
