import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { HttpContext } from '@adonisjs/core/http'
import { ConsoleReplayFailedException, ConsoleReplayIncompleteException } from '../errors.ts'
import { findEntry } from './find_entry.ts'
import { isEntryId } from '../ids.ts'
import type { ConsoleManager } from '../manager.ts'
import { REDACTED } from '../redact.ts'
import type { ConsoleEntry } from '../types.ts'

/** The header a replay carries: this process's nonce, a dot, the replayed entry's id */
export const REPLAY_HEADER = 'x-atrium-console-replay'
/** The header a replayed request answers with: its batch id */
export const REPLAY_BATCH_HEADER = 'x-atrium-console-batch'

/** How long a replayed request may take */
const REPLAY_TIMEOUT_MS = 30_000

/** Headers a client or the network sets, never replayed or copied */
const TRANSPORT_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
  REPLAY_HEADER,
])

/** Chosen per process: only a replay this process sends is marked as one */
const REPLAY_NONCE = randomBytes(16).toString('hex')

/** The replayed entry's id when `value` is a replay header this process set */
export function replayedEntryId(value: string | undefined): string | null {
  if (!value || !value.startsWith(`${REPLAY_NONCE}.`)) return null
  const id = value.slice(REPLAY_NONCE.length + 1)
  return isEntryId(id) ? id : null
}

/** What can be sent again of a recorded request, and what redaction or the cap changed */
export interface RecordedRequest {
  method: string
  /** The path with its recorded query string */
  url: string
  headers: Record<string, string>
  body: string | null
  /** False when the body was not recorded: the request cannot be sent as it was */
  complete: boolean
  /** Header names whose recorded value is redacted, left out */
  omittedHeaders: string[]
  /** What differs from the request the client sent */
  notes: string[]
}

export function recordedRequest(entry: ConsoleEntry): RecordedRequest {
  const content = entry.content as Record<string, any>
  const notes: string[] = []
  const headers: Record<string, string> = {}
  const omittedHeaders: string[] = []
  for (const [name, value] of Object.entries(content.headers ?? {})) {
    if (TRANSPORT_HEADERS.has(name) || value === undefined || value === null) continue
    const text = Array.isArray(value) ? value.join(', ') : String(value)
    if (text === REDACTED) omittedHeaders.push(name)
    else headers[name] = text
  }
  if (omittedHeaders.length) notes.push(`redacted headers left out: ${omittedHeaders.join(', ')}`)

  let url = String(content.path ?? '/')
  const query = queryString(content.query)
  if (query) url += `?${query}`
  if (query.includes(encodeURIComponent(REDACTED))) {
    notes.push(`redacted query values are sent as "${REDACTED}"`)
  }

  let body: string | null = null
  let complete = true
  // a client may send an absolute URL or "*" as its target: appended to this app's origin it names no URL
  if (!url.startsWith('/')) {
    complete = false
    notes.push(`the recorded target "${url.slice(0, 200)}" is not a path on this app`)
  }
  const recorded = content.body
  if (typeof recorded === 'string' && recorded.startsWith('[skipped')) {
    complete = false
    notes.push(`the body was not recorded ${recorded}`)
  } else if (recorded !== null && recorded !== undefined) {
    body = encodedBody(recorded, headers['content-type'] ?? '')
    if (body === null) {
      complete = false
      notes.push('the body was not recorded as text the request can carry again')
    } else if (JSON.stringify(recorded).includes(REDACTED)) {
      notes.push(`redacted body values are sent as "${REDACTED}"`)
    }
  }
  const method = String(content.method ?? entry.method ?? 'GET')
  return { method, url, headers, body, complete, omittedHeaders, notes }
}

/** The recorded (flat) query object as a query string */
function queryString(query: unknown) {
  if (!query || typeof query !== 'object') return ''
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    for (const each of Array.isArray(value) ? value : [value]) {
      search.append(key, typeof each === 'object' ? JSON.stringify(each) : String(each))
    }
  }
  return search.toString()
}

/** The recorded (parsed) body in the encoding its content type names; null when it cannot be rebuilt */
function encodedBody(recorded: unknown, contentType: string): string | null {
  if (typeof recorded === 'string') return recorded
  if (contentType.includes('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams()
    for (const [key, value] of Object.entries(recorded as Record<string, unknown>)) {
      if (typeof value === 'object' && value !== null) return null
      form.append(key, String(value))
    }
    return form.toString()
  }
  if (contentType.includes('multipart/')) return null
  return JSON.stringify(recorded)
}

/** A POSIX shell single-quoted word */
function quoted(value: string) {
  return `'${value.replaceAll("'", `'\\''`)}'`
}

/** The cURL command of a recorded request against `origin` */
export function curlCommand(request: RecordedRequest, origin: string) {
  const parts = ['curl']
  if (request.method !== 'GET' || request.body !== null) parts.push(`-X ${request.method}`)
  parts.push(quoted(`${origin}${request.url}`))
  for (const [name, value] of Object.entries(request.headers)) {
    parts.push(`-H ${quoted(`${name}: ${value}`)}`)
  }
  if (request.body !== null) parts.push(`--data-raw ${quoted(request.body)}`)
  return parts.join(' \\\n  ')
}

/**
 * `GET /entries/:id/curl` (a read) and `POST /entries/:id/replay` (a
 * mutation behind `authorizeAction`) for request entries.
 */
export class RequestToolsController {
  #manager: ConsoleManager
  #ownUrl: () => Promise<string>

  /** `ownUrl`: where this app's HTTP server listens, for replays sent to itself */
  constructor(manager: ConsoleManager, ownUrl: () => Promise<string>) {
    this.#manager = manager
    this.#ownUrl = ownUrl
  }

  #requestEntry(ctx: HttpContext) {
    return findEntry(this.#manager.store, ctx.params.id, {
      type: 'request',
      label: 'Request entry',
    })
  }

  curl = async (ctx: HttpContext) => {
    const request = recordedRequest(await this.#requestEntry(ctx))
    const origin = new URL(ctx.request.completeUrl()).origin
    return {
      data: {
        command: curlCommand(request, origin),
        omittedHeaders: request.omittedHeaders,
        notes: request.notes,
      },
    }
  }

  /**
   * Sends the recorded request again to this app, from this process, over
   * loopback. Redacted headers (credentials, cookies) are left out, so a
   * replay runs as an anonymous client unless the recorded request carried
   * its identity in a header the redaction keeps.
   */
  replay = async (ctx: HttpContext) => {
    await this.#manager.gates.authorizeAction(ctx, 'replay a request')
    const entry = await this.#requestEntry(ctx)
    const request = recordedRequest(entry)
    if (!request.complete) {
      throw new ConsoleReplayIncompleteException(`Cannot replay: ${request.notes.join('; ')}`)
    }
    const target = `${await this.#ownUrl()}${request.url}`
    let answer: Response
    try {
      answer = await fetch(target, {
        method: request.method,
        headers: { ...request.headers, [REPLAY_HEADER]: `${REPLAY_NONCE}.${entry.id}` },
        body: request.body ?? undefined,
        redirect: 'manual',
        signal: AbortSignal.timeout(REPLAY_TIMEOUT_MS),
      })
      // only the status matters; the body is read to free the connection
      await answer.arrayBuffer()
    } catch (error) {
      const cause = (error as { cause?: { message?: string } })?.cause?.message
      const reason = cause ?? (error as Error)?.message ?? String(error)
      throw new ConsoleReplayFailedException(`The replay got no answer from this app: ${reason}`)
    }
    await this.#manager.recorder.flush()
    return {
      data: {
        replayOf: entry.id,
        status: answer.status,
        batchId: answer.headers.get(REPLAY_BATCH_HEADER),
        omittedHeaders: request.omittedHeaders,
        notes: request.notes,
      },
    }
  }
}

/** `http://127.0.0.1:<port>` of the app's HTTP server */
export function loopbackUrl(server: { getNodeServer(): any }) {
  return async () => {
    const address = server.getNodeServer()?.address() as AddressInfo | null
    if (!address || typeof address !== 'object') {
      throw new Error('The HTTP server is not listening')
    }
    // a server on every interface is reached on loopback; one on a single address there
    const any = address.address === '0.0.0.0' || address.address === '::'
    const host = any ? '127.0.0.1' : address.address
    return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`
  }
}
