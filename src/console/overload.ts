import { monitorEventLoopDelay } from 'node:perf_hooks'
import { publishConsoleEvent } from './events.ts'
import type { Logger } from '@adonisjs/core/logger'

/** Resolved `overloadProtection`: false, or the threshold and the startup grace */
export type ResolvedOverload = false | { maxEventLoopLagMs: number; startupGraceMs: number }

/** How often the event-loop delay is read (and reset) */
export const OVERLOAD_WINDOW_MS = 1000

/**
 * Pauses recording while the app is overloaded: the event-loop delay's p99 is
 * read every second and reset. Over `maxEventLoopLagMs` (after the startup
 * grace) the recorder pauses; it resumes only once a window's p99 falls under
 * half the threshold (hysteresis, so a loop hovering at the threshold does not
 * flap). During the grace it samples but never pauses or logs.
 */
export class OverloadMonitor {
  #options: Exclude<ResolvedOverload, false>
  #logger?: Logger
  #histogram?: ReturnType<typeof monitorEventLoopDelay>
  #timer?: NodeJS.Timeout
  #startedAt = 0
  #onChange: (paused: boolean) => void

  paused = false
  /** When the current pause began (ms since epoch), or null */
  pausedSince: number | null = null
  /** Times recording paused since boot */
  pauses = 0
  /** p99 event-loop delay of the last window, in ms */
  lastLagMs = 0

  constructor(
    options: Exclude<ResolvedOverload, false>,
    onChange: (paused: boolean) => void,
    logger?: Logger
  ) {
    this.#options = options
    this.#onChange = onChange
    this.#logger = logger
  }

  start() {
    if (this.#timer) return
    this.#startedAt = Date.now()
    this.#histogram = monitorEventLoopDelay({ resolution: 10 })
    this.#histogram.enable()
    this.#timer = setInterval(() => this.sample(), OVERLOAD_WINDOW_MS)
    this.#timer.unref()
  }

  /** Stops the 1 s timer but keeps measuring, so a caller (a test) drives the windows with `sample()` */
  detachTimer() {
    if (this.#timer) clearInterval(this.#timer)
  }

  /** Reads and resets the window */
  sample() {
    const histogram = this.#histogram
    if (!histogram) return
    this.lastLagMs = histogram.count > 0 ? histogram.percentile(99) / 1e6 : 0
    histogram.reset()
    if (Date.now() - this.#startedAt < this.#options.startupGraceMs) return
    const threshold = this.#options.maxEventLoopLagMs
    if (!this.paused && this.lastLagMs > threshold) {
      this.paused = true
      this.pausedSince = Date.now()
      this.pauses++
      this.#logger?.warn(
        `console recording paused: event-loop delay p99 ${Math.round(this.lastLagMs)} ms over overloadProtection.maxEventLoopLagMs ${threshold} ms`
      )
      this.#onChange(true)
      publishConsoleEvent('recorder.paused', {
        eventLoopLagP99Ms: Math.round(this.lastLagMs),
        maxEventLoopLagMs: threshold,
      })
    } else if (this.paused && this.lastLagMs < threshold / 2) {
      const pausedMs = Date.now() - (this.pausedSince ?? Date.now())
      this.paused = false
      this.pausedSince = null
      this.#logger?.info(
        `console recording resumed: event-loop delay p99 ${Math.round(this.lastLagMs)} ms`
      )
      this.#onChange(false)
      publishConsoleEvent('recorder.resumed', {
        eventLoopLagP99Ms: Math.round(this.lastLagMs),
        pausedMs,
      })
    }
  }

  stop() {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    this.#histogram?.disable()
    this.#histogram = undefined
  }
}
