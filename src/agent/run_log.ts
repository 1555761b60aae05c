/**
 * One frame of a run's SSE stream. `seq` is sent as the SSE `id:` so a
 * client that reconnects says exactly what it already has.
 */
export interface RunFrame {
  seq: number
  event?: 'meta' | 'approval' | 'done' | 'error'
  data: Record<string, unknown>
}

type Listener = (frame: RunFrame | null) => void

/**
 * What an SSE response reads: frames after a sequence, then new ones,
 * `null` at the end. The in-memory log of the running instance, or a run
 * log in Redis on another instance.
 */
export interface RunReader {
  /** The lowest sequence still kept */
  readonly firstKept: number
  /** The highest sequence written so far */
  readonly lastSeq: number
  /** Replays frames after `after`, then tails; returns the unsubscribe */
  follow(after: number, listener: Listener): () => void
}

/**
 * The append-only frame log of one run, in memory. Writers append; readers
 * replay from a sequence and then tail. The run's HTTP response is only a
 * reader: a dropped connection stops reading, never the run.
 */
export class RunEventLog implements RunReader {
  #frames: RunFrame[] = []
  #listeners = new Set<Listener>()
  #next = 1
  #maxFrames: number
  finished = false
  /** Mirrors every appended frame elsewhere (the Redis sink) */
  onAppend?: (frame: RunFrame) => void

  constructor(
    readonly runId: string,
    readonly actorRef: string,
    maxFrames: number
  ) {
    this.#maxFrames = maxFrames
  }

  /** The lowest sequence still kept (frames before it were dropped by the cap) */
  get firstKept() {
    return this.#frames[0]?.seq ?? this.#next
  }

  get lastSeq() {
    return this.#next - 1
  }

  append(frame: Omit<RunFrame, 'seq'>): RunFrame | undefined {
    if (this.finished) return undefined
    const stored = { ...frame, seq: this.#next++ }
    this.#frames.push(stored)
    // The cap bounds memory of a runaway run; a resume older than the window gets 410
    if (this.#frames.length > this.#maxFrames) this.#frames.shift()
    if (frame.event === 'done' || frame.event === 'error') this.finished = true
    this.onAppend?.(stored)
    for (const listener of this.#listeners) listener(stored)
    if (this.finished) {
      for (const listener of this.#listeners) listener(null)
      this.#listeners.clear()
    }
    return stored
  }

  /** The frames kept, oldest first */
  frames(): readonly RunFrame[] {
    return this.#frames
  }

  /**
   * Frames after `after`, then every new frame as it is appended; `null`
   * marks the end. Returns the unsubscribe.
   */
  follow(after: number, listener: Listener): () => void {
    for (const frame of this.#frames) {
      if (frame.seq > after) listener(frame)
    }
    if (this.finished) {
      listener(null)
      return () => {}
    }
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }
}
