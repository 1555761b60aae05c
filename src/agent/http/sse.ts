import type { ServerResponse } from 'node:http'
import type { HttpContext } from '@adonisjs/core/http'
import type { RunFrame, RunReader } from '../run_log.ts'

/**
 * Bytes a slow reader may leave unread before its connection is dropped:
 * the run goes on and the client resumes with Last-Event-ID.
 */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024

/** A replay is written in pieces of about this many characters, not a write per frame */
const REPLAY_PIECE = 64 * 1024

/** One SSE frame as the spec frames it; `seq` becomes the `id:` line */
export function formatFrame(frame: Omit<RunFrame, 'seq'> & { seq?: number }) {
  const id = frame.seq === undefined ? '' : `id: ${frame.seq}\n`
  const event = frame.event ? `event: ${frame.event}\n` : ''
  return `${id}${event}data: ${JSON.stringify(frame.data)}\n\n`
}

/**
 * Writes to the socket now. Node holds a response's writes until the next
 * tick (it corks the socket and uncorks on `process.nextTick`), and a
 * model reply that arrives in one read runs its whole stream, and the
 * writes that end the turn, before that tick: the first delta waited
 * behind them. Corking around the write keeps the frame one packet.
 */
export function writeNow(response: ServerResponse, text: string) {
  const socket = response.socket
  if (!socket) return response.write(text)
  socket.cork()
  const written = response.write(text)
  socket.uncork()
  return written
}

export interface StreamOptions {
  /** Replay frames after this sequence, then tail */
  after: number
  heartbeatMs: number
  headers?: Record<string, string>
  /** Frames written first, without an id (a resume's own meta) */
  preamble?: string
  /** Skips logged frames, e.g. the original meta on a resume */
  skip?: (frame: RunFrame) => boolean
}

/**
 * Writes a run's event log to the response as server-sent events: replay,
 * tail, heartbeat comments, end with the run. Resolves when the stream
 * ends or the client goes away; neither touches the run itself.
 */
export function streamRunLog(ctx: HttpContext, log: RunReader | null, options: StreamOptions) {
  const response = ctx.response.response
  // Headers other middleware set through Adonis (CORS, request id) go out with the stream
  ctx.response.relayHeaders()
  response.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'Connection': 'keep-alive',
    'X-Accel-Buffering': 'no',
    ...options.headers,
  })
  // The preamble and the replay leave together, each later frame as it comes
  const socket = response.socket
  socket?.cork()
  if (options.preamble) response.write(options.preamble)
  if (!log) {
    response.end()
    socket?.uncork()
    return Promise.resolve()
  }

  return new Promise<void>((resolve) => {
    let closed = false
    let unsubscribe: () => void = () => {}
    // Frames a reader replays synchronously (the memory log) are joined into
    // pieces: one write per frame made a 10,000-frame replay slow to start
    let replaying = true
    let piece = ''
    // A long replay may exceed the slow-reader cap by itself; it is bounded by sse.maxFramesPerRun
    let maxBuffered = MAX_BUFFERED_BYTES
    const heartbeat = setInterval(() => response.write(': ping\n\n'), options.heartbeatMs)
    const close = () => {
      if (closed) return
      closed = true
      clearInterval(heartbeat)
      unsubscribe()
      resolve()
    }
    // The headers, the preamble and the first piece leave together; later pieces as they fill
    let corked = true
    const uncork = () => {
      if (!corked) return
      corked = false
      socket?.uncork()
    }
    const writePiece = () => {
      if (!piece) return
      response.write(piece)
      piece = ''
      uncork()
    }
    response.on('error', close)
    response.on('close', close)
    unsubscribe = log.follow(options.after, (frame) => {
      if (closed) return
      if (frame === null) {
        writePiece()
        response.end()
        close()
        return
      }
      if (options.skip?.(frame)) return
      if (replaying) {
        piece += formatFrame(frame)
        if (piece.length >= REPLAY_PIECE) writePiece()
        return
      }
      writeNow(response, formatFrame(frame))
      if (response.writableLength > maxBuffered) {
        response.destroy()
        close()
      }
    })
    replaying = false
    writePiece()
    maxBuffered = Math.max(MAX_BUFFERED_BYTES, response.writableLength * 2)
    uncork()
    if (closed) unsubscribe()
  })
}
