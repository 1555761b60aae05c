import type { HttpContext } from '@adonisjs/core/http'
import { importOptional } from '../../shared/optional_import.ts'
import {
  ConsoleInvalidReportException,
  ConsoleRateLimitedException,
  ConsoleReportTooLargeException,
} from '../errors.ts'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactUrl, redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import { TokenBucket } from './token_bucket.ts'

/** What a browser reports, once validated */
interface ClientErrorReport {
  message: string
  name?: string
  stack?: string
  url?: string
  source?: string
  line?: number
  column?: number
  context?: Record<string, unknown>
}

async function buildValidator() {
  const { default: vine } = await importOptional<typeof import('@vinejs/vine')>(
    '@vinejs/vine',
    '"clientErrors" in config/console.ts'
  )
  const position = () => vine.number().withoutDecimals().min(0).max(10_000_000).optional()
  return vine.compile(
    vine.object({
      message: vine.string().trim().minLength(1).maxLength(2000),
      name: vine.string().trim().maxLength(200).optional(),
      stack: vine.string().maxLength(10_000).optional(),
      url: vine.string().maxLength(2000).optional(),
      source: vine.string().maxLength(2000).optional(),
      line: position(),
      column: position(),
      context: vine.record(vine.any()).optional(),
    })
  )
}

/**
 * `POST {path}/api/client-errors`: the public endpoint browsers report their
 * errors to (only mounted with `clientErrors.enabled`). Each IP has a token
 * bucket (429 with Retry-After past it), the body is capped (413), the
 * fields are checked with VineJS (422 naming the field), and a report becomes
 * a `client_error` entry of its own batch, redacted like a request body.
 */
export class ClientErrorsController {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #bucket: TokenBucket
  #validator?: ReturnType<typeof buildValidator>

  constructor(config: ResolvedConsoleConfig, recorder: ConsoleRecorder) {
    this.#config = config
    this.#recorder = recorder
    this.#bucket = new TokenBucket(config.clientErrors)
  }

  store = async (ctx: HttpContext) => {
    const retryAfter = this.#bucket.take(ctx.request.ip())
    if (retryAfter > 0) throw new ConsoleRateLimitedException(retryAfter)
    const body = await this.#read(ctx)
    this.#validator ??= buildValidator()
    const validator = await this.#validator
    let report: ClientErrorReport
    try {
      report = await validator.validate(body)
    } catch (error: any) {
      if (error?.code !== 'E_VALIDATION_ERROR') throw error
      const first = error.messages?.[0] ?? {}
      throw new ConsoleInvalidReportException(
        `Invalid report: ${first.message ?? 'invalid field'}`,
        String(first.field ?? 'body')
      )
    }
    this.#record(report, ctx)
    ctx.response.status(202)
    return { received: true }
  }

  /** The JSON body, at most `maxBodyBytes`, whether or not the bodyparser ran */
  async #read(ctx: HttpContext): Promise<unknown> {
    const limit = this.#config.clientErrors.maxBodyBytes
    const tooLarge = () =>
      new ConsoleReportTooLargeException(`Reports are limited to ${limit} bytes`)
    const declared = Number(ctx.request.header('content-length'))
    if (Number.isFinite(declared) && declared > limit) throw tooLarge()
    let text = ctx.request.raw()
    if (text === null) {
      const raw = ctx.request.request
      if (raw.readableEnded || !raw.readable) return ctx.request.body()
      const chunks: Buffer[] = []
      let size = 0
      for await (const chunk of raw) {
        size += chunk.length
        if (size > limit) throw tooLarge()
        chunks.push(chunk)
      }
      text = Buffer.concat(chunks).toString('utf8')
    }
    if (Buffer.byteLength(text) > limit) throw tooLarge()
    try {
      return JSON.parse(text)
    } catch {
      throw new ConsoleInvalidReportException('Invalid report: the body is not JSON', 'body')
    }
  }

  #record(report: ClientErrorReport, ctx: HttpContext) {
    const bounds = this.#config.redact
    const name = report.name ?? 'Error'
    this.#recorder.record(
      {
        type: 'client_error',
        summary: `${name}: ${report.message}`.slice(0, 255),
        status: null,
        method: null,
        durationMs: null,
        slow: false,
        tags: ['client'],
        content: {
          name,
          message: redactValue(report.message, bounds),
          stack: report.stack?.split('\n').slice(0, 50).join('\n') ?? null,
          url: report.url ? redactUrl(report.url, bounds) : null,
          source: report.source ? redactUrl(report.source, bounds) : null,
          line: report.line ?? null,
          column: report.column ?? null,
          context: report.context ? redactValue(report.context, bounds) : null,
          userAgent: ctx.request.header('user-agent')?.slice(0, 512) ?? null,
          ip: ctx.request.ip(),
        },
      },
      // the console's own routes run in the ignored batch: a report is recorded alone
      null
    )
  }
}
