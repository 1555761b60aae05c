import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'

/**
 * `change` events naming the document whose comments or versions changed,
 * so the open pages reload them instead of polling.
 */
const changes = new EventEmitter().setMaxListeners(0)

/**
 * Middleware of the collaboration routes: after a write that succeeded,
 * tells the pages of its document what changed.
 */
export async function announceWrites(ctx: HttpContext, next: NextFn) {
  await next()
  if (ctx.request.method() === 'GET' || ctx.response.getStatus() >= 400) {
    return
  }
  const url = ctx.request.url()
  const kind = url.includes('/comments')
    ? 'comments'
    : url.includes('/versions')
      ? 'versions'
      : null
  const docName = ctx.request.input('docName') ?? ctx.request.qs().doc
  if (kind && typeof docName === 'string') {
    changes.emit('change', docName, kind)
  }
}

/**
 * `GET /collaboration-demo/changes`: a server-sent event stream of every
 * document's changes, `{ "doc": name, "kind": "comments" | "versions" }`,
 * until the page closes. One stream serves all the panels of a page.
 */
export function streamChanges({ request, response }: HttpContext) {
  const stream = new PassThrough()
  const send = (doc: string, kind: string) => {
    stream.write(`data: ${JSON.stringify({ doc, kind })}\n\n`)
  }
  changes.on('change', send)
  // a comment line now, so the browser sees the stream open
  stream.write(': connected\n\n')
  request.request.once('close', () => {
    changes.off('change', send)
    stream.end()
  })
  response.header('content-type', 'text/event-stream')
  response.header('cache-control', 'no-cache')
  response.stream(stream)
}
