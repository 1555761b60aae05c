import type { HttpContext } from '@adonisjs/core/http'
import {
  ConsoleInvalidQueryException,
  ConsoleNotFoundException,
  ConsoleUnauthenticatedException,
} from '../errors.ts'
import { sessionUser, type DashboardSessions } from '../session.ts'
import { readJsonBody } from './read_body.ts'

/** The one message of every failed login: it never says which part was wrong */
export const LOGIN_FAILED = 'Invalid credentials'

/**
 * `{mount}/api/auth/*`: starts (mode A `session`, mode B `login`), reads and
 * ends the dashboard session. Not behind the session gate.
 */
export class AuthController {
  #sessions: DashboardSessions

  constructor(sessions: DashboardSessions) {
    this.#sessions = sessions
  }

  session = async (ctx: HttpContext) => {
    if (!this.#sessions.modes.includes('session')) {
      throw new ConsoleNotFoundException('Session sign-in is not configured')
    }
    if (!(await this.#sessions.startFromHost(ctx))) throw new ConsoleUnauthenticatedException()
    return ctx.response.noContent()
  }

  login = async (ctx: HttpContext) => {
    if (!this.#sessions.modes.includes('login')) {
      throw new ConsoleNotFoundException('Password sign-in is not configured')
    }
    const body = await readJsonBody(ctx)
    for (const field of ['username', 'password'] as const) {
      if (typeof body[field] !== 'string') {
        throw new ConsoleInvalidQueryException(`"${field}" must be a string`, field)
      }
    }
    const ok = await this.#sessions.startFromLogin(
      ctx,
      body.username as string,
      body.password as string
    )
    if (!ok) throw new ConsoleUnauthenticatedException(LOGIN_FAILED)
    return ctx.response.noContent()
  }

  logout = async (ctx: HttpContext) => {
    this.#sessions.clear(ctx)
    return ctx.response.noContent()
  }

  me = async (ctx: HttpContext) => {
    const session = await this.#sessions.authenticate(ctx)
    if (!session) {
      return ctx.response.status(401).send({ auth: { modes: this.#sessions.modes } })
    }
    return { user: sessionUser(session) }
  }
}
