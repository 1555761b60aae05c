import { get as httpGet } from 'node:http'
import { getActiveTest } from '@japa/runner'
import { defineConfig as bodyParserConfig } from '@adonisjs/core/bodyparser'
import { BodyParserMiddleware } from '@adonisjs/bodyparser/bodyparser_middleware'
import { ExceptionHandler, type Router } from '@adonisjs/core/http'
import type { ApplicationService } from '@adonisjs/core/types'
import { createDatabase, setupApp } from '../helpers.ts'
import { dropStubTables, migrateStubs } from '../migration_stubs.ts'
import { defineConfig } from '../../src/console/main.ts'
import { signSession, SESSION_COOKIE } from '../../src/console/session.ts'
import type { ConsoleConfig, ConsoleSession } from '../../src/console/types.ts'

/**
 * Registers the app's exception handler as start/kernel.ts does in a real
 * app (one that extends Adonis' ExceptionHandler and keeps its `report`).
 */
class AppExceptionHandlerProvider {
  constructor(protected app: ApplicationService) {}
  async boot() {
    const server = await this.app.container.make('server')
    server.errorHandler(async () => ({
      default: class HttpExceptionHandler extends ExceptionHandler {},
    }))
  }
}

/** A secret long enough for dashboardAuth */
export const SECRET = 'console-test-secret-0123456789-abcdef'

/**
 * An app with the console provider on the selected database (tables from the
 * published stub), the bodyparser as `start/kernel.ts` registers it, and a
 * capture of the logger's warnings.
 */
export async function consoleApp(
  options: {
    config?: ConsoleConfig
    routes?: (router: Router) => void
    production?: boolean
    /** Registers the bodyparser as start/kernel.ts does (default true) */
    bodyparser?: boolean
    /** More providers (Redis, cache, mail) and their config files */
    providers?: (() => Promise<any>)[]
    appConfig?: Record<string, unknown>
    /** `console`: booted as `node ace` boots it (no HTTP server, Ace bound) */
    environment?: 'web' | 'console'
  } = {}
) {
  const db = await createDatabase()
  await migrateStubs(db, 'console')
  getActiveTest()!.cleanup(() => dropStubTables(db, 'console'))

  const previous = process.env.NODE_ENV
  if (options.production) process.env.NODE_ENV = 'production'
  let testApp: Awaited<ReturnType<typeof setupApp>>
  try {
    testApp = await setupApp({
      database: true,
      environment: options.environment,
      providers: [
        ...(options.providers ?? []),
        () => import('../../providers/console_provider.ts'),
        async () => ({ default: AppExceptionHandlerProvider }),
      ],
      // a loaded test machine must not pause recording under other tests: overload.spec.ts turns it on
      config: {
        ...options.appConfig,
        console: defineConfig({ overloadProtection: false, ...options.config }),
      },
      routes: async (router) => {
        const config = bodyParserConfig({})
        if (options.bodyparser !== false)
          router.use([
            async () => ({
              default: class extends BodyParserMiddleware {
                constructor() {
                  super(config as any)
                }
              },
            }),
          ])
        options.routes?.(router)
      },
    })
  } finally {
    process.env.NODE_ENV = previous
  }
  const manager = await testApp.app.container.make('atrium.console')
  const logger = await testApp.app.container.make('logger')
  const warnings: string[] = []
  const warn = logger.warn.bind(logger)
  logger.warn = ((message: unknown, ...rest: unknown[]) => {
    warnings.push(String(typeof message === 'string' ? message : rest[0]))
    return warn(message as any, ...(rest as []))
  }) as typeof logger.warn

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${testApp.url}/console/api${path}`, { redirect: 'manual', ...init })
  return { ...testApp, db, manager, warnings, api }
}

/** A signed session cookie header with chosen instants (seconds from now) */
export function sessionCookie(
  fields: Partial<ConsoleSession> & { iatOffset?: number; expOffset?: number } = {},
  secret = SECRET
) {
  const now = Math.floor(Date.now() / 1000)
  const { iatOffset = 0, expOffset = 8 * 3600, ...rest } = fields
  const session: ConsoleSession = {
    sub: 'u1',
    roles: [],
    iat: now + iatOffset,
    exp: now + expOffset,
    ...rest,
  }
  return `${SESSION_COOKIE}=${signSession(session, secret)}`
}

/** The console_session value a response sets, or undefined */
export function setCookie(response: Response) {
  return response.headers.getSetCookie().find((line) => line.startsWith(`${SESSION_COOKIE}=`))
}

/** The `name=value` part of a Set-Cookie line, to send back */
export function cookiePair(line: string | undefined) {
  return line?.split(';')[0] ?? ''
}

/**
 * A GET through node:http, for headers fetch() overrides (`sec-fetch-mode`
 * is always "cors" under undici): a browser navigation sends "navigate".
 */
export function navigate(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; location?: string; body: string }>((resolve, reject) => {
    const request = httpGet(
      url,
      { headers: { 'sec-fetch-mode': 'navigate', ...headers } },
      (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => (body += chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode!, location: response.headers.location, body })
        )
      }
    )
    request.on('error', reject)
  })
}
