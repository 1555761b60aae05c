import { format } from 'node:util'
import { Logger, type LoggerManager } from '@adonisjs/core/logger'
import type { ConsoleRecorder } from '../recorder.ts'
import { redactValue } from '../redact.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

const ORIGINAL_LOG = Symbol.for('atrium.console.originalLog')
/**
 * Set on the config object of an app's loggers: child loggers share their
 * parent's config object (a disabled logger's pino instance is shared by every
 * app, so it cannot carry the mark).
 */
const OWNER = Symbol.for('atrium.console.logWatcher')
const ORIGINAL_CREATE = Symbol.for('atrium.console.originalCreateLogger')

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

  #manager?: LoggerManager<any>

  /**
   * Wraps `Logger#log` (once per process) and marks this app's loggers as
   * recorded by this watcher: the manager's config (so its children,
   * `ctx.logger` included) and those of loggers it creates later. Another app
   * in the same process keeps its own loggers, so its lines are not recorded
   * here.
   */
  install(manager: LoggerManager<any>) {
    this.#manager = manager
    ;((manager as any).config as any)[OWNER] = this
    const owned = manager as any
    if (!owned[ORIGINAL_CREATE]) {
      const create = owned.createLogger
      owned[ORIGINAL_CREATE] = create
      owned.createLogger = function (this: LoggerManager<any>, ...args: unknown[]) {
        const logger = create.apply(this, args)
        ;(logger.config as any)[OWNER] = (this.config as any)[OWNER]
        return logger
      }
    }
    const prototype = Logger.prototype as any
    if (prototype[ORIGINAL_LOG]) return
    const original = prototype.log
    prototype[ORIGINAL_LOG] = original
    prototype.log = function (this: Logger, level: string, ...args: unknown[]) {
      ;(this.config as any)?.[OWNER]?.record(level, args)
      return original.call(this, level, ...args)
    }
  }

  /** Stops recording (the wrapper stays and becomes a pass-through) */
  uninstall() {
    const config = (this.#manager as any)?.config
    if (config?.[OWNER] === this) config[OWNER] = undefined
  }

  /** Records one line; never throws */
  record(level: string, args: unknown[]) {
    try {
      const rank = LOG_LEVELS[level as LogLevel]
      if (rank === undefined || rank < this.#minimum) return
      // the usual line, `logger.info('text')`, arrives as ('text', undefined): no formatting to do
      if (typeof args[0] === 'string' && args.length <= 2 && args[1] === undefined) {
        return this.#store(level, args[0], null)
      }
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
      this.#store(level, message, context)
    } catch {
      // recording never fails a log call
    }
  }

  #store(level: string, message: string, context: unknown) {
    try {
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
