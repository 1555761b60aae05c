import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { batchStorage, type RecordingBatch } from '../batch.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactHeaders, redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

const batches = new WeakMap<HttpContext, RecordingBatch>()

/** The batch a request runs in (the exception watcher finds it through the context) */
export function batchOf(ctx: HttpContext) {
  return batches.get(ctx)
}

/**
 * The request body as it is recorded: skipped for binary content types, for
 * `skipBody`, and over `maxBodyBytes`; otherwise the parsed body, redacted.
 */
export function captureBody(ctx: HttpContext, config: ResolvedConsoleConfig): unknown {
  const capture = config.requestCapture
  const type = String(ctx.request.header('content-type') ?? '').toLowerCase()
  if (type && capture.skipBodyContentTypes.some((skipped) => type.startsWith(skipped))) {
    return `[skipped: ${type.split(';')[0]}]`
  }
  if (capture.skipBody?.(ctx)) return '[skipped]'
  const declared = Number(ctx.request.header('content-length'))
  const raw = ctx.request.raw()
  const size = raw !== null ? Buffer.byteLength(raw) : Number.isFinite(declared) ? declared : 0
  if (size > capture.maxBodyBytes) {
    return `[skipped: ${size} bytes over the ${capture.maxBodyBytes} bytes cap]`
  }
  const body = ctx.request.body()
  if (!body || (typeof body === 'object' && Object.keys(body).length === 0)) return null
  return redactValue(body, config.redact)
}

/**
 * Server middleware recording each request as one batch: everything the
 * request does (queries, exceptions) shares its batch id. The console's own
 * routes run in the ignored batch and are never recorded.
 */
export class RequestWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #customIp: boolean

  /** `customIp`: the app sets `http.getIp`, so the client ip always comes from `request.ip()` */
  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { customIp?: boolean } = {}
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#customIp = options.customIp ?? false
  }

  /**
   * The client ip as `request.ip()` gives it. Without an X-Forwarded-For
   * header (and without a custom `getIp`) that is the socket's address, read
   * directly: resolving the proxy chain costs more than recording the request.
   */
  #ip(ctx: HttpContext) {
    if (this.#customIp || ctx.request.request.headers['x-forwarded-for'] !== undefined) {
      return ctx.request.ip()
    }
    return ctx.request.request.socket?.remoteAddress ?? ctx.request.ip()
  }

  #isConsoleRoute(url: string) {
    const path = this.#config.path
    return url === path || url.startsWith(`${path}/`)
  }

  async handle(ctx: HttpContext, next: NextFn) {
    // overloaded: not even a batch (exceptions are still counted by the recorder)
    if (!this.#config.enabled || this.#recorder.paused) return next()
    const url = ctx.request.url()
    const batch = this.#recorder.openBatch(this.#isConsoleRoute(url))
    batches.set(ctx, batch)
    if (batch.ignored) return batchStorage.run(batch, next)

    const started = process.hrtime.bigint()
    const requestId = batch.id
    try {
      return await batchStorage.run(batch, next)
    } finally {
      this.#finish(ctx, batch, requestId, started)
    }
  }

  #finish(ctx: HttpContext, batch: RecordingBatch, id: string, started: bigint) {
    try {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6
      const status = ctx.response.getStatus()
      const slow = durationMs >= this.#config.slowRequestMs
      const method = ctx.request.method()
      const path = ctx.request.url()
      const user = this.#config.resolveUser(ctx) ?? null
      this.#recorder.record(
        {
          id,
          type: 'request',
          summary: `${method} ${path}`.slice(0, 255),
          status,
          method,
          durationMs,
          slow,
          tags: slow ? ['slow'] : [],
          content: {
            method,
            path,
            route: ctx.route?.pattern ?? null,
            status,
            durationMs,
            ip: this.#ip(ctx),
            query: redactValue(ctx.request.qs(), this.#config.redact),
            headers: redactHeaders(ctx.request.headers(), this.#config.redact),
            body: captureBody(ctx, this.#config),
            user,
            droppedEntries: batch.dropped,
          },
        },
        batch
      )
      this.#recorder.commit(batch, { failing: status >= 500 || slow })
    } catch {
      // recording never fails a request
    }
  }
}
