import { format } from 'node:util'
import { Logger } from '@adonisjs/core/logger'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

const ORIGINAL_LOG = Symbol.for('atrium.console.originalLog')

/** Pino's level numbers */
export const LOG_LEVELS = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
} as const
export type LogLevel = keyof typeof LOG_LEVELS

let active: LogWatcher | undefined

/**
 * Records log lines written through the Adonis logger (`logger.info(...)`,
 * `ctx.logger.warn(...)`), at or above the watcher's level, whatever level
 * the app's logger prints. Every Adonis logger method goes through
 * `Logger#log`, which the watcher wraps once; a line logged during a request
 * joins its batch. The merging object is redacted like a request body.
 */
export class LogWatcher {
  #config: ResolvedConsoleConfig
  #recorder: ConsoleRecorder
  #minimum: number

  constructor(
    config: ResolvedConsoleConfig,
    recorder: ConsoleRecorder,
    options: { level?: LogLevel }
  ) {
    this.#config = config
    this.#recorder = recorder
    this.#minimum = LOG_LEVELS[options.level ?? 'info']
  }

  /** Wraps `Logger#log` (once per process) and makes this watcher the active one */
  install() {
    active = this
    const prototype = Logger.prototype as any
    if (prototype[ORIGINAL_LOG]) return
    const original = prototype.log
    prototype[ORIGINAL_LOG] = original
    prototype.log = function (this: Logger, level: string, ...args: unknown[]) {
      active?.record(level, args)
      return original.call(this, level, ...args)
    }
  }

  /** Stops recording (the wrapper stays and becomes a pass-through) */
  uninstall() {
    if (active === this) active = undefined
  }

  /** Records one line; never throws */
  record(level: string, args: unknown[]) {
    try {
      const rank = LOG_LEVELS[level as LogLevel]
      if (rank === undefined || rank < this.#minimum) return
      // Adonis passes every parameter through, so `logger.info('text')` arrives as ('text', undefined)
      const trimmed = [...args]
      while (trimmed.length > 1 && trimmed[trimmed.length - 1] === undefined) trimmed.pop()
      const [first, ...rest] = trimmed
      let message: string
      let context: unknown = null
      if (typeof first === 'string') {
        message = format(first, ...rest)
      } else {
        const [text, ...values] = rest
        message = text === undefined ? '' : format(String(text), ...values)
        context = first instanceof Error ? { err: first } : first
      }
      if (context && typeof context === 'object' && (context as any).err instanceof Error) {
        const error = (context as any).err as Error
        context = { ...context, err: { name: error.name, message: error.message } }
      }
      this.#recorder.record({
        type: 'log',
        summary: `${level}: ${message}`.slice(0, 255),
        status: null,
        method: null,
        durationMs: null,
        slow: false,
        tags: [level],
        content: {
          level,
          message: redactValue(message, this.#config.redact),
          context: context === null ? null : redactValue(context, this.#config.redact),
        },
      })
    } catch {
      // recording never fails a log call
    }
  }
}
