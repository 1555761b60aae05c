/** One server-sent event as the wire carried it */
export interface SseFrame {
  id?: string
  event?: string
  data?: any
  /** A `:` comment line (heartbeat) */
  comment?: string
}

/**
 * Reads server-sent events from a fetch response, frame by frame, exactly
 * as they were framed on the wire (ids, event names, comments).
 */
export class SseReader {
  #reader?: ReadableStreamDefaultReader<Uint8Array>
  #decoder = new TextDecoder()
  #buffer = ''
  #queue: SseFrame[] = []
  #ended = false

  /** The body is locked only once frames are read, so error bodies stay readable as JSON */
  constructor(readonly response: Response) {}

  get #body() {
    this.#reader ??= this.response.body!.getReader()
    return this.#reader
  }

  async next(): Promise<SseFrame | null> {
    while (!this.#queue.length) {
      if (this.#ended) return null
      let chunk: { done: boolean; value?: Uint8Array }
      try {
        chunk = await this.#body.read()
      } catch {
        this.#ended = true
        continue
      }
      if (chunk.done) {
        this.#ended = true
        continue
      }
      this.#buffer += this.#decoder.decode(chunk.value, { stream: true })
      let end: number
      while ((end = this.#buffer.indexOf('\n\n')) !== -1) {
        const block = this.#buffer.slice(0, end)
        this.#buffer = this.#buffer.slice(end + 2)
        this.#queue.push(parseBlock(block))
      }
    }
    return this.#queue.shift()!
  }

  /** Frames up to and including the first that matches (comments excluded unless asked) */
  async until(match: (frame: SseFrame) => boolean, options: { comments?: boolean } = {}) {
    const frames: SseFrame[] = []
    for (;;) {
      const frame = await this.next()
      if (!frame)
        throw new Error(`Stream ended before the expected frame: ${JSON.stringify(frames)}`)
      if (frame.comment !== undefined && !options.comments && !match(frame)) continue
      frames.push(frame)
      if (match(frame)) return frames
    }
  }

  /** Every remaining frame (comments excluded) until the server ends the stream */
  async rest() {
    const frames: SseFrame[] = []
    for (let frame = await this.next(); frame; frame = await this.next()) {
      if (frame.comment === undefined) frames.push(frame)
    }
    return frames
  }

  /** Drops the connection, as a client that goes away */
  async cancel() {
    await this.#body.cancel().catch(() => {})
  }
}

function parseBlock(block: string): SseFrame {
  const frame: SseFrame = {}
  const data: string[] = []
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim()
    else if (line.startsWith('id: ')) frame.id = line.slice(4)
    else if (line.startsWith('event: ')) frame.event = line.slice(7)
    else if (line.startsWith('data: ')) data.push(line.slice(6))
    else throw new Error(`Unexpected SSE line: ${JSON.stringify(line)}`)
  }
  if (data.length) frame.data = JSON.parse(data.join('\n'))
  return frame
}
