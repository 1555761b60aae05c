import { performance } from 'node:perf_hooks'

/**
 * The spacing of one document's broadcasts, adapted to what they cost. A
 * broadcast may start `factor` times its own (smoothed) duration after the
 * previous one, never more than `capMs`: a quiet or small document sends at
 * the end of the event-loop turn its message arrived in, a busy crowded one
 * coalesces more per frame, so broadcasting keeps at most about 1 / (factor
 * + 1) of the process whatever the load.
 */
export class AdaptiveWindow {
  #lastStart = Number.NEGATIVE_INFINITY
  #cost = 0

  constructor(
    readonly factor: number,
    readonly capMs: number
  ) {}

  /** Milliseconds to wait before the next broadcast; 0 or less: at the end of this turn */
  wait(now = performance.now()) {
    return Math.min(this.capMs, this.#cost * this.factor) - (now - this.#lastStart)
  }

  /** Notes a broadcast that ran from `start` to `end` */
  ran(start: number, end: number) {
    this.#lastStart = start
    this.#cost = this.#cost * 0.75 + (end - start) * 0.25
  }

  /** Runs `task(target)` when the window allows */
  schedule<T>(task: (target: T) => void, target: T) {
    const wait = this.wait()
    if (wait <= 0) {
      // setImmediate runs after every socket read of this I/O phase
      setImmediate(task, target)
    } else {
      setTimeout(task, wait, target)
    }
  }
}
