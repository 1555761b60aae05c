import { ExceptionHandler, type HttpContext } from '@adonisjs/core/http'
import type { ConsoleRecorder, NewEntry } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'
import { batchOf } from './request_watcher.ts'

const ORIGINAL_REPORT = Symbol.for('atrium.console.originalReport')
/** Lines of a stack kept in an entry */
export const MAX_STACK_LINES = 50

let active: ExceptionWatcher | undefined

/**
 * Records the errors the app's exception handler reports. Adonis calls
 * `report(error, ctx)` on the app's handler for every error a request
 * raises; the watcher wraps `ExceptionHandler#report` once, so a handler
 * that extends it and calls `super.report()` (as the starter kits do) is
 * covered. 4xx errors are control flow and skipped unless `captureHttp4xx`.
 */
export class ExceptionWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder

  constructor(config: ResolvedConsoleConfig, recorder: ConsoleRecorder) {
    this.#config = config
    this.#recorder = recorder
  }

  /** Wraps `ExceptionHandler#report` (once per process) and makes this watcher the active one */
  install() {
    active = this
    const prototype = ExceptionHandler.prototype as any
    if (prototype[ORIGINAL_REPORT]) return
    const original = prototype.report
    prototype[ORIGINAL_REPORT] = original
    prototype.report = function (this: ExceptionHandler, error: unknown, ctx: HttpContext) {
      active?.record(error, ctx)
      return original.call(this, error, ctx)
    }
  }

  /** Stops recording (the wrapper stays and becomes a pass-through) */
  uninstall() {
    if (active === this) active = undefined
  }

  /** Records one error; never throws */
  record(error: unknown, ctx?: HttpContext) {
    try {
      // 4xx errors are frequent control flow: skipped before any entry is built
      const status = (error as { status?: unknown } | null)?.status
      const is4xx = Number.isInteger(status) && (status as number) < 500
      if (is4xx && !this.#config.exceptions.captureHttp4xx) return
      const entry = exceptionEntry(error, this.#config, {
        method: ctx?.request.method() ?? null,
        path: ctx?.request.url() ?? null,
      })
      this.#recorder.record(entry, (ctx && batchOf(ctx)) || undefined)
    } catch {
      // recording never fails error handling
    }
  }
}

/**
 * An exception entry for any thrown value: class, message (redacted and
 * bounded), code, status (500 unless the error says), the first
 * `MAX_STACK_LINES` lines of its stack. A value that is not an error (a
 * rejected string or object) keeps its redacted copy as `reason`.
 */
export function exceptionEntry(
  error: unknown,
  config: ResolvedConsoleConfig,
  where: { method: string | null; path: string | null; status?: number | null }
): NewEntry {
  const isObject = !!error && typeof error === 'object'
  const err = (isObject ? error : { message: String(error) }) as {
    name?: string
    message?: string
    status?: number
    code?: string
    stack?: string
    constructor?: { name?: string }
  }
  const status =
    where.status !== undefined ? where.status : Number.isInteger(err.status) ? err.status! : 500
  const name =
    err.constructor?.name && err.constructor.name !== 'Object'
      ? err.constructor.name
      : (err.name ?? 'Error')
  const message = String(err.message ?? '')
  const isError = error instanceof Error
  return {
    type: 'exception',
    summary: `${name}: ${message}`.slice(0, 255),
    status,
    method: where.method,
    durationMs: null,
    slow: false,
    tags: status === null ? [] : status >= 500 ? ['5xx'] : ['4xx'],
    content: {
      class: name,
      message: redactValue(message, config.redact),
      code: err.code ?? null,
      status,
      stack:
        typeof err.stack === 'string'
          ? err.stack.split('\n').slice(0, MAX_STACK_LINES).join('\n')
          : null,
      path: where.path,
      ...(isObject && !isError ? { reason: redactValue(error, config.redact) } : {}),
    },
  }
}
