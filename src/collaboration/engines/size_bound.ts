import { performance } from 'node:perf_hooks'

/** Near the cap a document is measured again at most this often */
const MEASURE_EVERY_MS = 500

/**
 * An upper bound on a document's size, for `limits.maxDocumentBytes`: its
 * size when last measured plus every byte it grew by since. Near the cap
 * `fits` measures the document again, at most every 500 ms, so a writer at
 * the cap cannot make the server encode the document per message.
 */
export class DocumentSizeBound {
  #measured: number
  #growth = 0
  #measuredAt = 0

  constructor(measuredBytes: number) {
    this.#measured = measuredBytes
  }

  /** The document was just measured (encoded or stored whole) at `bytes` */
  measured(bytes: number, now = performance.now()) {
    this.#measured = bytes
    this.#growth = 0
    this.#measuredAt = now
  }

  /** The document grew by at most `bytes` */
  grew(bytes: number) {
    this.#growth += bytes
  }

  /** False when `bytes` more could take the document past `max`; `measure` encodes it */
  fits(bytes: number, max: number, measure: () => number) {
    if (this.#measured + this.#growth + bytes <= max) {
      return true
    }
    const now = performance.now()
    if (this.#growth > 0 && now - this.#measuredAt >= MEASURE_EVERY_MS) {
      this.measured(measure(), now)
    }
    return this.#measured + this.#growth + bytes <= max
  }
}
