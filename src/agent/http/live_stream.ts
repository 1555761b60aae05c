import type { HttpContext } from '@adonisjs/core/http'
import { onAgentEvents } from '../diagnostics.ts'

/** Bytes a slow dashboard may leave unread before its stream is dropped */
const MAX_BUFFERED_BYTES = 1024 * 1024

/**
 * `GET /stream` of the governance API: every agent diagnostics event as an
 * unnamed SSE frame `{ event, ts, payload }`, a comment every
 * `heartbeatMs`, until the client goes away or `untilClosed` fires (the
 * app shuts down). Resolves when the stream has ended.
 */
export function streamAgentEvents(
  ctx: HttpContext,
  options: { heartbeatMs: number; onShutdown: (close: () => void) => () => void }
) {
  const response = ctx.response.response
  ctx.response.relayHeaders()
  response.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'Connection': 'keep-alive',
    'X-Accel-Buffering': 'no',
  })
  // The first bytes tell the client (and any proxy) the stream is open
  response.write(': connected\n\n')

  return new Promise<void>((resolve) => {
    let closed = false
    const heartbeat = setInterval(() => response.write(': ping\n\n'), options.heartbeatMs)
    const unsubscribe = onAgentEvents((event, payload) => {
      if (closed) return
      response.write(`data: ${JSON.stringify({ event, ts: Date.now(), payload })}\n\n`)
      if (response.writableLength > MAX_BUFFERED_BYTES) end()
    })
    const forget = options.onShutdown(() => end())
    function close() {
      if (closed) return
      closed = true
      clearInterval(heartbeat)
      unsubscribe()
      forget()
      resolve()
    }
    function end() {
      if (!response.writableEnded) response.end()
      close()
    }
    response.on('error', close)
    response.on('close', close)
  })
}
