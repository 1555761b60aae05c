import { Agent, errors } from 'undici'

/** The most of an API answer read; a larger one fails the call */
const MAX_ANSWER_BYTES = 1024 * 1024

/**
 * Kept-alive connections to the gateways' APIs, shared by every driver and
 * pooled per origin: a delivery the driver confirms with the gateway pays one
 * round trip, not a connection and a TLS handshake. undici's dispatcher costs
 * about half of `node:http`'s client CPU per call and a fifth of `fetch`'s
 * (benchmarks/payments/route.ts measures the routes that pay it).
 */
const DISPATCHER = new Agent({ maxResponseSize: MAX_ANSWER_BYTES })

export interface GatewayApiAnswer {
  status: number
  /** The answer's JSON, or undefined when it is not JSON */
  body: unknown
}

interface GatewayApiCall {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  timeoutMs: number
}

/**
 * One JSON call to a gateway's API. A route that asks the gateway on every
 * delivery (InfinitePay's payment check, Mercado Pago's resource read) pays
 * it each time. Rejects on a network error, after `timeoutMs` (the whole
 * call: a trickling answer times out too), or when the answer passes 1 MiB.
 *
 * Every call the drivers make only reads, so a kept-alive connection the API
 * closed just as it was reused is retried once on a new one.
 */
export async function callGatewayApi(
  url: string,
  options: GatewayApiCall
): Promise<GatewayApiAnswer> {
  try {
    return await callOnce(url, options)
  } catch (error) {
    if (error instanceof errors.SocketError) {
      return callOnce(url, options)
    }
    throw error
  }
}

async function callOnce(url: string, options: GatewayApiCall): Promise<GatewayApiAnswer> {
  const target = new URL(url)
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    throw new Error(`Unsupported protocol in ${target.origin}`)
  }
  const abort = new AbortController()
  const timer = setTimeout(
    () => abort.abort(new Error(`no answer within ${options.timeoutMs} ms`)),
    options.timeoutMs
  )
  try {
    const answer = await DISPATCHER.request({
      origin: target.origin,
      path: target.pathname + target.search,
      method: options.method ?? 'GET',
      headers: { accept: 'application/json', ...options.headers },
      body: options.body,
      signal: abort.signal,
    })
    const text = await answer.body.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: answer.statusCode, body }
  } catch (error) {
    if (error instanceof errors.ResponseExceededMaxSizeError) {
      throw new Error(`answer over ${MAX_ANSWER_BYTES} bytes`, { cause: error })
    }
    throw error
  } finally {
    clearTimeout(timer)
  }
}
