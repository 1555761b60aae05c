import type { Router } from '@adonisjs/core/http'
import type { ConsoleManager } from '../manager.ts'
import { AuthController } from './auth_controller.ts'
import { ClientErrorsController } from './client_errors_controller.ts'
import { EntriesController } from './entries_controller.ts'
import { surfaceMiddleware } from './gates.ts'
import { HealthController } from './health_controller.ts'
import { RequestToolsController } from './request_tools.ts'
import { explainHandler } from './explain.ts'
import { aiStatusHandler, diagnoseHandler } from './diagnose.ts'
import { assetHandler, shellHandler } from './dashboard.ts'
import { LIVE_TAIL_CHANNEL } from '../live_tail.ts'
import { McpController } from '../mcp/http.ts'
import { ProfilesController } from '../profiling/profiles_controller.ts'
import { ExtensionsController } from '../extensions/extensions_controller.ts'
import { batchStorage, IGNORED_BATCH } from '../batch.ts'
import type { EntryType } from '../types.ts'
import type { NextFn } from '@adonisjs/core/types/http'
import type { HttpContext } from '@adonisjs/core/http'

/**
 * Runs a console route in the ignored batch whoever captures requests: with
 * `registerRequestMiddleware: false` the app's own capture skips these paths,
 * and the console's reads must still not record their own queries.
 */
function ownWork(_ctx: HttpContext, next: NextFn) {
  return batchStorage.run(IGNORED_BATCH, next)
}
import { QueuesController } from '../queues/queues_controller.ts'

/**
 * Mounts the page at `{path}` (its hashed assets under `{path}/assets`) and
 * the API at `{path}/api`. The API's
 * `/auth/*` routes skip the session gate; every other API route passes the
 * session gate, then `authorizer`, then the host's `middleware`. The page and
 * its assets only pass `ui.middleware`: a guard on one surface never protects the other.
 * With `mcp` set, the MCP endpoint answers at its own path behind its bearer token.
 * The extensions' entry types are listed at `{path}/api/<type>` and their data
 * providers served under `{path}/api/extensions`, behind the API's gates.
 */
export function registerConsoleRoutes(router: Router, manager: ConsoleManager) {
  const { config, gates, sessions } = manager
  const api = `${config.path}/api`
  const apiGuards = surfaceMiddleware(config.api)

  if (sessions) {
    const auth = new AuthController(sessions)
    router
      .group(() => {
        router.post('/auth/session', auth.session).as('session')
        router.post('/auth/login', auth.login).as('login')
        router.post('/auth/logout', auth.logout).as('logout')
        router.get('/auth/me', auth.me).as('me')
      })
      .prefix(api)
      .use([ownWork, ...apiGuards])
      .as('atrium.console.auth')
  }

  if (config.clientErrors.enabled) {
    // public: any visitor's browser reports here, so no gate; the bucket and the cap bound it
    const clientErrors = new ClientErrorsController(config, manager.recorder)
    router
      .post(`${api}/client-errors`, clientErrors.store)
      .use(ownWork)
      .as('atrium.console.client_errors')
  }

  const entries = new EntriesController(manager)
  const health = new HealthController(manager)
  const requestTools = new RequestToolsController(manager, () => manager.ownUrl())
  // without profiling.enabled the profile routes do not exist (404)
  const queues = new QueuesController(manager, manager.queues)
  const profiles = manager.profiler ? new ProfilesController(manager, manager.profiler) : undefined
  const extensions = new ExtensionsController(config, manager.logger)
  router
    .group(() => {
      router.get('/requests', entries.list('request')).as('requests')
      router.get('/queries', entries.list('query')).as('queries')
      router.get('/exceptions', entries.list('exception')).as('exceptions')
      router.get('/logs', entries.list('log')).as('logs')
      router.get('/http', entries.list('http')).as('http')
      router.get('/features', entries.list('feature')).as('features')
      router.get('/cache', entries.list('cache')).as('cache')
      router.get('/redis', entries.list('redis')).as('redis')
      router.get('/mail', entries.list('mail')).as('mail')
      router.get('/jobs', entries.list('job')).as('jobs')
      router.get('/schedule-runs', entries.list('schedule')).as('schedule_runs')
      router.get('/events', entries.list('event')).as('events')
      router.get('/client-errors', entries.list('client_error')).as('client_errors')
      router.get('/search', entries.search).as('search')
      router.get('/entries/:id', entries.show).as('entry')
      router.get('/entries/:id/curl', requestTools.curl).as('entry.curl')
      router.post('/entries/:id/replay', requestTools.replay).as('entry.replay')
      router.post('/entries/:id/explain', explainHandler(manager)).as('entry.explain')
      router.post('/entries/:id/diagnose', diagnoseHandler(manager)).as('entry.diagnose')
      router.get('/ai', aiStatusHandler(manager)).as('ai')
      router.get('/batches/:id', entries.batch).as('batch')
      router.get('/health', health.show).as('health')
      router.post('/prune', entries.prune).as('prune')
      router.get('/queues', queues.index).as('queues')
      router.get('/queues/:driver/:queue/jobs', queues.jobs).as('queues.jobs')
      router.get('/queues/:driver/:queue/jobs/:id', queues.show).as('queues.job')
      router.post('/queues/:driver/:queue/jobs/:id/retry', queues.retry).as('queues.retry')
      router.delete('/queues/:driver/:queue/jobs/:id', queues.remove).as('queues.remove')
      router.get('/schedules', queues.schedules).as('schedules')
      router.get('/cpu-profiles', entries.list('cpu_profile')).as('cpu_profiles')
      // a declared type is a string the store keeps like a built-in one
      for (const type of config.customEntryTypes) {
        router.get(`/${type}`, entries.list(type as EntryType)).as(`custom.${type}`)
      }
      router.get('/extensions', extensions.index).as('extensions')
      router.get('/extensions/:name/:provider', extensions.data).as('extensions.data')
      if (profiles) {
        router.post('/profiles/arm', profiles.arm).as('profiles.arm')
        router.get('/profiles/:id/download', profiles.download).as('profiles.download')
      }
      if (manager.liveTailAvailable) registerLiveTailRoutes(router, manager)
    })
    .prefix(api)
    .use([ownWork, gates.session, gates.authorize, ...apiGuards])
    .as('atrium.console.api')

  if (config.mcp) {
    // not behind the API gates: MCP clients are not browsers, the bearer token is the gate
    const mcp = new McpController(manager, config.mcp)
    router
      .route(config.mcp.path, ['POST', 'GET', 'DELETE'], mcp.handle)
      .use(ownWork)
      .as('atrium.console.mcp')
  }

  if (config.ui.enabled) {
    const pageGuards = [ownWork, ...surfaceMiddleware(config.ui)]
    router.get(config.path, shellHandler(config.path)).use(pageGuards).as('atrium.console.page')
    router
      .get(`${config.path}/assets/:name`, assetHandler)
      .use(pageGuards)
      .as('atrium.console.assets')
  }
}

/**
 * `GET /live` says the tail is on; under `/live/__transmit/*` are the routes
 * `@adonisjs/transmit-client` calls with `baseUrl: '{path}/api/live'`. The
 * tail exists once the manager has started, before the first request.
 */
function registerLiveTailRoutes(router: Router, manager: ConsoleManager) {
  let built: ReturnType<NonNullable<ConsoleManager['liveTail']>['handlers']> | undefined
  const handlers = () => (built ??= manager.liveTail!.handlers())
  router.get('/live', () => ({ data: { channel: LIVE_TAIL_CHANNEL } })).as('live')
  router.get('/live/__transmit/events', (ctx) => handlers().events(ctx)).as('live.events')
  router.post('/live/__transmit/subscribe', (ctx) => handlers().subscribe(ctx)).as('live.subscribe')
  router
    .post('/live/__transmit/unsubscribe', (ctx) => handlers().unsubscribe(ctx))
    .as('live.unsubscribe')
}
