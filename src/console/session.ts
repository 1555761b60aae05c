import { createHmac, timingSafeEqual } from 'node:crypto'
import type { HttpContext } from '@adonisjs/core/http'
import type { Logger } from '@adonisjs/core/logger'
import { readCookieHeader, serializeCookie } from './cookies.ts'
import debug from './debug.ts'
import { publishConsoleEvent } from './events.ts'
import type { ConsoleSession, ConsoleSessionUser, ResolvedDashboardAuth } from './types.ts'

/** Name of the dashboard session cookie */
export const SESSION_COOKIE = 'console_session'

/** An expired cookie is still accepted this long, for clocks that disagree */
export const EXPIRY_GRACE_SECONDS = 30

/** Longest cookie value considered; anything longer is malformed */
const MAX_COOKIE_LENGTH = 4096

/** Sessions whose `revalidate` answer is remembered; the oldest is forgotten first */
const MAX_REVALIDATIONS = 10_000

function mac(payload: string, secret: string) {
  return createHmac('sha256', secret).update(payload).digest()
}

/**
 * The cookie value: base64url(JSON payload) "." base64url(HMAC-SHA256(payload, secret)).
 */
export function signSession(session: ConsoleSession, secret: string): string {
  const payload = Buffer.from(JSON.stringify(session)).toString('base64url')
  return `${payload}.${mac(payload, secret).toString('base64url')}`
}

function isSession(value: any): value is ConsoleSession {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof value.sub === 'string' &&
    value.sub.length > 0 &&
    (value.name === undefined || typeof value.name === 'string') &&
    Array.isArray(value.roles) &&
    value.roles.every((role: unknown) => typeof role === 'string') &&
    Number.isSafeInteger(value.iat) &&
    Number.isSafeInteger(value.exp) &&
    value.exp > value.iat
  )
}

/**
 * Checks the signature (timing-safe) and the payload's shape. Returns null for
 * anything tampered or malformed; never throws. Expiry is the caller's check.
 */
export function verifySession(value: string | undefined, secret: string): ConsoleSession | null {
  if (typeof value !== 'string' || value.length > MAX_COOKIE_LENGTH) return null
  const dot = value.indexOf('.')
  if (dot <= 0 || dot !== value.lastIndexOf('.')) return null
  const payload = value.slice(0, dot)
  const signature = Buffer.from(value.slice(dot + 1), 'base64url')
  const expected = mac(payload, secret)
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) return null
  try {
    const session = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    return isSession(session) ? session : null
  } catch {
    return null
  }
}

/** The user a session stands for, as hooks and `/auth/me` see it */
export function sessionUser(
  session: ConsoleSession
): Required<Pick<ConsoleSessionUser, 'id'>> & ConsoleSessionUser & { roles: string[] } {
  return {
    id: session.sub,
    ...(session.name === undefined ? {} : { name: session.name }),
    roles: session.roles,
  }
}

/** A hook's answer as a user, or null when it is not one */
function asUser(value: unknown): ConsoleSessionUser | null {
  if (!value || typeof value !== 'object') return null
  const user = value as Record<string, unknown>
  const id = typeof user.id === 'number' ? String(user.id) : user.id
  if (typeof id !== 'string' || id.length === 0) return null
  const roles = Array.isArray(user.roles) ? user.roles.filter((r) => typeof r === 'string') : []
  return { id, ...(typeof user.name === 'string' ? { name: user.name } : {}), roles }
}

/**
 * The `dashboardAuth` session gate: issues, verifies, renews and clears the
 * `console_session` cookie. Nothing is stored server-side except a bounded
 * memory of recent `revalidate` answers (so it runs once per ttl/2 per session).
 */
export class DashboardSessions {
  #options: ResolvedDashboardAuth
  #path: string
  #logger?: Logger
  #warned = new Set<string>()
  #revalidations = new Map<string, { until: number; allowed: Promise<boolean> }>()

  constructor(options: ResolvedDashboardAuth, path: string, logger?: Logger) {
    this.#options = options
    this.#path = path
    this.#logger = logger
  }

  /** The configured modes, as `/auth/me` lists them */
  get modes() {
    return this.#options.modes
  }

  /**
   * Runs a host hook; a throw is a denial, logged once per hook kind (the
   * error message only, never the credentials).
   */
  async runHook<T>(kind: string, hook: () => T | Promise<T>): Promise<T | null> {
    try {
      return await hook()
    } catch (error) {
      if (!this.#warned.has(kind)) {
        this.#warned.add(kind)
        this.#logger?.warn(
          `console dashboardAuth.${kind} threw (${(error as Error)?.message ?? error}); treated as a denial. Further ${kind} errors are not logged`
        )
      }
      debug('dashboardAuth.%s threw: denied', kind)
      return null
    }
  }

  /** Mode A: asks the host's `session` hook; a user gets a cookie */
  startFromHost(ctx: HttpContext): Promise<boolean> {
    const hook = this.#options.session!
    return this.#start(ctx, 'session', () => hook(ctx))
  }

  /** Mode B: asks the host's `login` hook; a user gets a cookie */
  startFromLogin(ctx: HttpContext, username: string, password: string): Promise<boolean> {
    const hook = this.#options.login!
    return this.#start(ctx, 'login', () => hook(username, password))
  }

  /** Runs a sign-in hook and publishes its outcome (never the credentials) */
  async #start(
    ctx: HttpContext,
    mode: 'session' | 'login',
    hook: () => ConsoleSessionUser | null | Promise<ConsoleSessionUser | null>
  ): Promise<boolean> {
    let threw = false
    const user = asUser(
      await this.runHook(mode, async () => {
        try {
          return await hook()
        } catch (error) {
          threw = true
          throw error
        }
      })
    )
    if (user) {
      this.issue(ctx, user)
      publishConsoleEvent('session.opened', { mode, userId: user.id })
    } else {
      publishConsoleEvent('session.denied', {
        mode,
        reason: threw ? 'hook_failed' : 'rejected',
        ip: ctx.request.ip(),
      })
    }
    return !!user
  }

  /** Sets a fresh cookie for a user */
  issue(ctx: HttpContext, user: ConsoleSessionUser) {
    const iat = Math.floor(Date.now() / 1000)
    const ttl = Math.max(1, Math.floor(this.#options.ttlMs / 1000))
    const session: ConsoleSession = {
      sub: user.id,
      ...(user.name === undefined ? {} : { name: user.name }),
      roles: user.roles ?? [],
      iat,
      exp: iat + ttl,
    }
    this.#setCookie(ctx, signSession(session, this.#options.secret), ttl)
    return session
  }

  /** Clears the cookie on the response */
  clear(ctx: HttpContext) {
    this.#setCookie(ctx, '', 0)
  }

  /**
   * The request's valid session, renewed when past half its lifetime, or null
   * (absent, tampered, malformed, expired beyond the grace, or refused by
   * `revalidate`, which also clears the cookie). Attaches it to the request.
   */
  async authenticate(ctx: HttpContext): Promise<ConsoleSession | null> {
    const value = readCookieHeader(ctx.request)[SESSION_COOKIE]
    if (value === undefined) return null
    const session = verifySession(value, this.#options.secret)
    const now = Math.floor(Date.now() / 1000)
    const ttl = Math.floor(this.#options.ttlMs / 1000)
    if (
      !session ||
      now > session.exp + EXPIRY_GRACE_SECONDS ||
      session.iat > now + EXPIRY_GRACE_SECONDS ||
      // a cookie issued before `ttl` was lowered does not outlive the new ttl
      session.exp > now + ttl + EXPIRY_GRACE_SECONDS
    ) {
      debug('session cookie invalid or expired')
      return null
    }

    let current = session
    if (now >= session.iat + (session.exp - session.iat) / 2) {
      if (this.#options.revalidate && !(await this.#revalidate(session))) {
        debug('revalidate refused session of %s', session.sub)
        this.clear(ctx)
        return null
      }
      current = this.issue(ctx, sessionUser(session))
    }
    ctx.request.consoleSession = current
    ctx.consoleSession = current
    return current
  }

  /**
   * One `revalidate` call per session (subject and issue instant) per ttl/2:
   * concurrent requests carrying the same cookie share its answer.
   */
  #revalidate(session: ConsoleSession): Promise<boolean> {
    const key = `${session.sub}\u0000${session.iat}`
    const now = Date.now()
    const known = this.#revalidations.get(key)
    if (known && known.until > now) return known.allowed

    const hook = this.#options.revalidate!
    const allowed = this.runHook('revalidate', () => hook(sessionUser(session))).then(
      (answer) => answer === true
    )
    this.#revalidations.delete(key)
    this.#revalidations.set(key, { until: now + this.#options.ttlMs / 2, allowed })
    while (this.#revalidations.size > MAX_REVALIDATIONS) {
      this.#revalidations.delete(this.#revalidations.keys().next().value!)
    }
    return allowed
  }

  #setCookie(ctx: HttpContext, value: string, maxAgeSeconds: number) {
    const secure =
      ctx.request.protocol() === 'https' ||
      String(ctx.request.header('x-forwarded-proto') ?? '')
        .split(',')[0]
        .trim()
        .toLowerCase() === 'https'
    ctx.response.append(
      'set-cookie',
      serializeCookie(SESSION_COOKIE, value, { path: this.#path, maxAgeSeconds, secure })
    )
  }
}
