import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'

/**
 * Kept-alive sockets to the gateways' APIs, shared by every driver: a
 * delivery the driver confirms with the gateway pays one round trip, not a
 * connection and a TLS handshake.
 */
const AGENTS = {
  'http:': new HttpAgent({ keepAlive: true }),
  'https:': new HttpsAgent({ keepAlive: true }),
}

/** The most of an API answer read; a larger one fails the call */
const MAX_ANSWER_BYTES = 1024 * 1024

export interface GatewayApiAnswer {
  status: number
  /** The answer's JSON, or undefined when it is not JSON */
  body: unknown
}

/**
 * One JSON call to a gateway's API over node:http(s). A route that asks the
 * gateway on every delivery (InfinitePay's payment check, Mercado Pago's
 * resource read) pays it each time, and this costs a fraction of `fetch`'s
 * CPU per call. Rejects on a network error, after `timeoutMs`, or when the
 * answer passes 1 MiB. A kept-alive socket the API closed as it was reused
 * is retried once on a new one, as Node.js documents.
 */
export async function callGatewayApi(
  url: string,
  options: GatewayApiCall
): Promise<GatewayApiAnswer> {
  try {
    return await callOnce(url, options)
  } catch (error) {
    if ((error as StaleSocketError).staleSocket) {
      return callOnce(url, options)
    }
    throw error
  }
}

interface GatewayApiCall {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  timeoutMs: number
}

type StaleSocketError = Error & { staleSocket?: boolean }

function callOnce(url: string, options: GatewayApiCall): Promise<GatewayApiAnswer> {
  const target = new URL(url)
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  const agent = AGENTS[target.protocol as keyof typeof AGENTS]
  if (!agent) {
    return Promise.reject(new Error(`Unsupported protocol in ${target.origin}`))
  }
  const headers: Record<string, string | number> = {
    accept: 'application/json',
    ...options.headers,
  }
  if (options.body !== undefined) {
    headers['content-length'] = Buffer.byteLength(options.body)
  }
  return new Promise<GatewayApiAnswer>((resolve, reject) => {
    const outgoing = send(target, { method: options.method ?? 'GET', headers, agent })
    // the whole call, not the socket's idle time: a trickling answer times out too
    const timer = setTimeout(
      () => outgoing.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs
    )
    const fail = (error: StaleSocketError) => {
      clearTimeout(timer)
      const code = (error as NodeJS.ErrnoException).code
      error.staleSocket = outgoing.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')
      reject(error)
    }
    outgoing.on('error', fail)
    outgoing.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = []
      let size = 0
      response.on('error', fail)
      response.on('data', (chunk: Buffer) => {
        size += chunk.byteLength
        if (size > MAX_ANSWER_BYTES) {
          outgoing.destroy(new Error(`answer over ${MAX_ANSWER_BYTES} bytes`))
          return
        }
        chunks.push(chunk)
      })
      response.on('end', () => {
        clearTimeout(timer)
        let body: unknown
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        } catch {
          body = undefined
        }
        resolve({ status: response.statusCode ?? 0, body })
      })
    })
    outgoing.end(options.body)
  })
}
