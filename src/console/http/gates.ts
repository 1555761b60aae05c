import type { HttpContext } from '@adonisjs/core/http'
import type { Logger } from '@adonisjs/core/logger'
import type { NextFn } from '@adonisjs/core/types/http'
import debug from '../debug.ts'
import { publishConsoleEvent } from '../events.ts'
import { ConsoleForbiddenException, ConsoleUnauthenticatedException } from '../errors.ts'
import type { DashboardSessions } from '../session.ts'
import type { ResolvedConsoleConfig } from '../types.ts'

const REACHED = Symbol('atrium.console.surfaceReached')

/**
 * The console's built-in gates: the session cookie (when `dashboardAuth` is
 * set), then `authorizer` for reads and `authorizeAction` for mutations.
 * A missing session is 401; a refusal by a hook is 403; a hook that throws
 * refuses, logged once per hook.
 */
export class ConsoleGates {
  #config: ResolvedConsoleConfig
  #sessions?: DashboardSessions
  #inProduction: boolean
  #logger?: Logger
  #warned = new Set<string>()

  constructor(
    config: ResolvedConsoleConfig,
    sessions: DashboardSessions | undefined,
    inProduction: boolean,
    logger?: Logger
  ) {
    this.#config = config
    this.#sessions = sessions
    this.#inProduction = inProduction
    this.#logger = logger
  }

  /** One line stating who can reach what, logged at boot */
  describe(): string {
    const session = this.#sessions
      ? `session cookie (${this.#sessions.modes.join(', ')})`
      : 'no session gate'
    const reads = this.#config.authorizer
      ? 'authorizer'
      : this.#sessions
        ? 'any signed-in session'
        : this.#inProduction
          ? 'denied (production without authorizer)'
          : 'open (not production, no authorizer)'
    const actions = this.#config.authorizeAction ? 'authorizeAction' : 'denied (no authorizeAction)'
    const apiGuards = this.#config.api.middleware.length
    const pageGuards = this.#config.ui.middleware.length
    const mcp = this.#config.mcp
    const mcpGate = !mcp
      ? 'MCP off'
      : mcp.token === null
        ? `MCP at ${mcp.path} without a token (localhost only)`
        : `MCP at ${mcp.path} behind its bearer token`
    return (
      `console at ${this.#config.path}: API gate ${session}; reads ${reads}; ` +
      `mutations ${actions}; API middleware ${apiGuards}; page middleware ${pageGuards}; ${mcpGate}`
    )
  }

  async #ask(kind: string, hook: () => boolean | Promise<boolean>): Promise<boolean> {
    try {
      return (await hook()) === true
    } catch (error) {
      if (!this.#warned.has(kind)) {
        this.#warned.add(kind)
        this.#logger?.warn(
          `console ${kind} threw (${(error as Error)?.message ?? error}); treated as a denial. Further ${kind} errors are not logged`
        )
      }
      return false
    }
  }

  /** Middleware: a valid session cookie, else 401 */
  session = async (ctx: HttpContext, next: NextFn) => {
    if (this.#sessions && !(await this.#sessions.authenticate(ctx))) {
      throw new ConsoleUnauthenticatedException()
    }
    return next()
  }

  /** Middleware: `authorizer` (or the default: deny in production without a session gate), else 403 */
  authorize = async (ctx: HttpContext, next: NextFn) => {
    if (!(await this.#readAllowed(ctx))) {
      debug('authorizer refused %s', ctx.request.url())
      throw new ConsoleForbiddenException()
    }
    return next()
  }

  /**
   * The two read gates as one answer, for what subscribes outside the API's
   * middleware (the live tail's channel): a valid session when
   * `dashboardAuth` is set, then `authorizer` or its default.
   */
  async canRead(ctx: HttpContext): Promise<boolean> {
    if (this.#sessions && !(await this.#sessions.authenticate(ctx))) return false
    return this.#readAllowed(ctx)
  }

  /** `authorizer`, or without one: allowed behind a session gate or outside production */
  #readAllowed(ctx: HttpContext): Promise<boolean> | boolean {
    const authorizer = this.#config.authorizer
    return authorizer
      ? this.#ask('authorizer', () => authorizer(ctx))
      : !!this.#sessions || !this.#inProduction
  }

  /** Throws 403 unless `authorizeAction` allows the named mutation (default deny) */
  async authorizeAction(ctx: HttpContext, name: string) {
    const hook = this.#config.authorizeAction
    if (!hook || !(await this.#ask('authorizeAction', () => hook(ctx, { name })))) {
      debug('authorizeAction refused %s', name)
      publishConsoleEvent('action.denied', {
        action: name,
        userId: ctx.request.consoleSession?.sub ?? null,
        ip: ctx.request.ip(),
      })
      throw new ConsoleForbiddenException(`Not allowed to ${name}`)
    }
  }
}

/**
 * Wraps a surface's host middleware: when one of them stops the request
 * (it never reaches the inner marker), a browser navigation
 * (`sec-fetch-mode: navigate`) is redirected to `signInUrl` and any other
 * request gets a 401 JSON body, whatever the middleware answered.
 */
export function surfaceMiddleware(options: { middleware: any[]; signInUrl: string }): any[] {
  if (options.middleware.length === 0) return []
  const boundary = async (ctx: HttpContext, next: NextFn) => {
    await next()
    if ((ctx as any)[REACHED]) return
    debug('surface middleware refused %s', ctx.request.url())
    if (ctx.request.header('sec-fetch-mode') === 'navigate') {
      ctx.response.status(302).header('location', options.signInUrl).send('')
      return
    }
    const error = new ConsoleUnauthenticatedException()
    ctx.response.removeHeader('location')
    ctx.response.status(401).send(error.toResponseBody())
  }
  const marker = async (ctx: HttpContext, next: NextFn) => {
    ;(ctx as any)[REACHED] = true
    return next()
  }
  return [boundary, ...options.middleware, marker]
}
