import { safeEqual } from '@adonisjs/core/helpers'
import type { HttpContext } from '@adonisjs/core/http'
import debug from '../debug.ts'
import type { ConsoleManager } from '../manager.ts'
import type { ResolvedMcp } from '../types.ts'
import { loadMcpSdk } from './sdk.ts'
import { createConsoleMcpServer } from './server.ts'

/** Largest accepted MCP request body: tool calls are a few hundred bytes */
export const MAX_MCP_BODY_BYTES = 64 * 1024

/** Host names the tokenless development mode answers on (DNS rebinding guard) */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/i

/** A JSON-RPC error answer outside any call, as the SDK's own transport writes them */
function rpcError(ctx: HttpContext, status: number, message: string) {
  ctx.response.status(status).json({ jsonrpc: '2.0', error: { code: -32000, message }, id: null })
}

/**
 * `POST {path}/mcp`: the Model Context Protocol over stateless streamable
 * HTTP. Each request gets a fresh server and transport (no session is kept),
 * answers with JSON rather than an event stream, and goes through Adonis'
 * response so the host's middleware and error handling still apply. The
 * read `authorizer` does not run here: MCP clients are not browsers, so the
 * gate is the bearer token (or, with `mcp: true` in development, a loopback
 * Host header).
 */
export class McpController {
  #manager: ConsoleManager
  #mcp: ResolvedMcp

  constructor(manager: ConsoleManager, mcp: ResolvedMcp) {
    this.#manager = manager
    this.#mcp = mcp
  }

  /** False (after answering 401 or 403) when the request may not reach the tools */
  #admit(ctx: HttpContext): boolean {
    const token = this.#mcp.token
    if (token === null) {
      // without a token, only a client on this machine: a page that rebinds its
      // own domain to 127.0.0.1 still sends that domain as Host
      if (LOOPBACK.test(ctx.request.header('host') ?? '')) return true
      debug('mcp refused a non-loopback host without a token')
      rpcError(ctx, 403, 'mcp: true answers on localhost only; configure mcp: { token }')
      return false
    }
    const header = ctx.request.header('authorization') ?? ''
    const given = /^Bearer +(.+)$/i.exec(header)?.[1]?.trim() ?? ''
    if (given !== '' && safeEqual(given, token)) return true
    debug('mcp refused a %s bearer token', given === '' ? 'missing' : 'wrong')
    ctx.response.header(
      'www-authenticate',
      given === '' ? 'Bearer realm="console"' : 'Bearer realm="console", error="invalid_token"'
    )
    rpcError(ctx, 401, 'A valid bearer token is required')
    return false
  }

  handle = async (ctx: HttpContext) => {
    if (!this.#admit(ctx)) return
    if (ctx.request.method() !== 'POST') {
      // stateless: no event stream to open with GET, no session to end with DELETE
      ctx.response.header('allow', 'POST')
      return rpcError(ctx, 405, 'Method not allowed')
    }
    const body = await readBody(ctx)
    if (body === TOO_LARGE) {
      return rpcError(ctx, 413, `Request body over ${MAX_MCP_BODY_BYTES} bytes`)
    }

    const sdk = await loadMcpSdk()
    const server = createConsoleMcpServer(sdk, this.#manager)
    const transport = new sdk.Transport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    try {
      await server.connect(transport)
      const answer = await transport.handleRequest(webRequest(ctx), { parsedBody: body })
      ctx.response.status(answer.status)
      answer.headers.forEach((value, name) => ctx.response.header(name, value))
      ctx.response.send(await answer.text())
    } finally {
      await server.close()
    }
  }
}

const TOO_LARGE = Symbol('too large')

/**
 * The JSON-RPC body: what the bodyparser parsed when it ran on this route,
 * else the raw stream read here; both capped. Undefined lets the SDK answer
 * its own parse error.
 */
async function readBody(ctx: HttpContext): Promise<unknown> {
  const declared = Number(ctx.request.header('content-length'))
  if (declared > MAX_MCP_BODY_BYTES) return TOO_LARGE
  const raw = ctx.request.raw()
  if (raw !== null) {
    if (Buffer.byteLength(raw) > MAX_MCP_BODY_BYTES) return TOO_LARGE
    return ctx.request.bodyType === 'json' ? ctx.request.body() : parseJson(raw)
  }
  const stream = ctx.request.request
  if (stream.readableEnded || !stream.readable) return undefined
  const text = await readCapped(stream)
  return text === TOO_LARGE ? TOO_LARGE : parseJson(text)
}

/**
 * The stream's text, or TOO_LARGE once it passes the cap. The rest is drained,
 * not destroyed: destroying the request would close the socket the 413 goes out on.
 */
function readCapped(stream: HttpContext['request']['request']) {
  return new Promise<string | typeof TOO_LARGE>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_MCP_BODY_BYTES) {
        chunks.length = 0
        resolve(TOO_LARGE)
      } else chunks.push(chunk)
    })
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    stream.on('error', reject)
  })
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    // an unparsable body is the SDK's -32700 answer
    return null
  }
}

/** The request as the SDK's web-standard transport reads it: method, URL and headers (the body is passed parsed) */
function webRequest(ctx: HttpContext): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(ctx.request.headers())) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const each of value) headers.append(name, each)
    else headers.set(name, value)
  }
  return new Request(ctx.request.completeUrl(true), { method: 'POST', headers })
}
