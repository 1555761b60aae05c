import diagnosticsChannel from 'node:diagnostics_channel'
import { performance } from 'node:perf_hooks'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactHeaders, redactUrl } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

/** A request between its start and its answer */
interface Started {
  at: number
  batch: RecordingBatch | undefined
  method: string
  url: string
  client: 'fetch' | 'http'
  headers: Record<string, string>
}

type Headers = Record<string, string | string[] | undefined>

/** undici gives headers as a flat [name, value, ...] array (of strings or buffers) or as raw text */
function undiciHeaders(raw: unknown): Headers {
  const headers: Headers = {}
  if (typeof raw === 'string') {
    for (const line of raw.split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon > 0)
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    return headers
  }
  if (!Array.isArray(raw)) return headers
  for (let index = 0; index + 1 < raw.length; index += 2) {
    headers[String(raw[index]).toLowerCase()] = String(raw[index + 1])
  }
  return headers
}

/**
 * Outgoing HTTP requests: `fetch` (undici's `undici:request:*` diagnostics
 * channels) and `node:http`/`node:https` clients (`http.client.*`). An entry
 * is recorded when the response headers arrive (its duration is the time to
 * them) or when the request fails. Request and response headers and query
 * keys are redacted like incoming ones.
 */
export class HttpClientWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #slowMs: number
  #started = new WeakMap<object, Started>()
  #subscriptions: [string, (message: any) => void][] = []

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { slowMs?: number }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#slowMs = options.slowMs ?? 1000
  }

  install() {
    this.#subscriptions = [
      ['undici:request:create', ({ request }) => this.#undiciStart(request)],
      [
        'undici:request:headers',
        ({ request, response }) =>
          this.#finish(request, response?.statusCode ?? null, undiciHeaders(response?.headers)),
      ],
      ['undici:request:error', ({ request, error }) => this.#finish(request, null, {}, error)],
      ['http.client.request.start', ({ request }) => this.#httpStart(request)],
      [
        'http.client.response.finish',
        ({ request, response }) =>
          this.#finish(request, response?.statusCode ?? null, response?.headers ?? {}),
      ],
      ['http.client.request.error', ({ request, error }) => this.#finish(request, null, {}, error)],
    ]
    for (const [name, listener] of this.#subscriptions) diagnosticsChannel.subscribe(name, listener)
  }

  uninstall() {
    for (const [name, listener] of this.#subscriptions)
      diagnosticsChannel.unsubscribe(name, listener)
    this.#subscriptions = []
  }

  #url(url: string) {
    return redactUrl(url, this.#config.redact)
  }

  #begin(target: object, started: Omit<Started, 'at' | 'batch'>) {
    const batch = batchStorage.getStore()
    if (batch?.ignored || !this.#config.enabled) return
    this.#started.set(target, { ...started, at: performance.now(), batch })
  }

  #undiciStart(request: any) {
    try {
      this.#begin(request, {
        method: String(request.method ?? 'GET'),
        url: this.#url(`${request.origin ?? ''}${request.path ?? ''}`),
        client: 'fetch',
        headers: redactHeaders(undiciHeaders(request.headers), this.#config.redact),
      })
    } catch {
      // recording never fails a request
    }
  }

  #httpStart(request: any) {
    try {
      const protocol = String(request.protocol ?? 'http:')
      const host = String(request.getHeader?.('host') ?? request.host ?? '')
      this.#begin(request, {
        method: String(request.method ?? 'GET'),
        url: this.#url(`${protocol}//${host}${request.path ?? ''}`),
        client: 'http',
        headers: redactHeaders(request.getHeaders?.() ?? {}, this.#config.redact),
      })
    } catch {
      // recording never fails a request
    }
  }

  #finish(target: object, status: number | null, responseHeaders: Headers, error?: Error) {
    try {
      const started = target ? this.#started.get(target) : undefined
      if (!started) return
      this.#started.delete(target)
      const durationMs = performance.now() - started.at
      const slow = durationMs >= this.#slowMs
      const tags = slow ? ['slow'] : []
      if (error) tags.push('error')
      this.#recorder.record(
        {
          type: 'http',
          summary: `${started.method} ${started.url}`.slice(0, 255),
          status,
          method: started.method,
          durationMs,
          slow,
          tags,
          content: {
            client: started.client,
            method: started.method,
            url: started.url,
            status,
            durationMs,
            requestHeaders: started.headers,
            responseHeaders: redactHeaders(responseHeaders, this.#config.redact),
            error: error ? `${error.name}: ${error.message}` : null,
          },
        },
        started.batch
      )
    } catch {
      // recording never fails a request
    }
  }
}
