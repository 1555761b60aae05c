import type { ApplicationService } from '@adonisjs/core/types'
import type { Logger } from '@adonisjs/core/logger'
import { ConsoleGates } from './http/gates.ts'
import { loopbackUrl } from './http/request_tools.ts'
import { PruneScheduler } from './retention/schedule.ts'
import { OverloadMonitor } from './overload.ts'
import { CpuProfiler } from './profiling/profiler.ts'
import { ConsoleRecorder } from './recorder.ts'
import { LiveTail, type TransmitLike } from './live_tail.ts'
import { DashboardSessions } from './session.ts'
import type { ConsoleStore, PruneResult } from './stores/contract.ts'
import type { ResolvedConsoleConfig } from './types.ts'
import { assertPackagesInstalled, importOptional } from '../shared/optional_import.ts'
import { CacheWatcher } from './watchers/cache_watcher.ts'
import { EventWatcher, type EmitterLike } from './watchers/event_watcher.ts'
import { ExceptionWatcher } from './watchers/exception_watcher.ts'
import { FeatureWatcher } from './watchers/feature_watcher.ts'
import { HttpClientWatcher } from './watchers/http_client_watcher.ts'
import { JobsWatcher } from './watchers/jobs_watcher.ts'
import { ScheduleWatcher } from './watchers/schedule_watcher.ts'
import { scheduleRunChannel } from './queues/schedule_runs.ts'
import { LogWatcher } from './watchers/log_watcher.ts'
import { MailWatcher } from './watchers/mail_watcher.ts'
import { QueryWatcher } from './watchers/query_watcher.ts'
import { RedisWatcher, type RedisManagerLike } from './watchers/redis_watcher.ts'
import { RequestWatcher } from './watchers/request_watcher.ts'
import { ProcessCrashWatcher } from './watchers/process_crash_watcher.ts'
import { AlertEvaluator } from './alerts/evaluator.ts'
import { forgetMountedConsole, rememberMountedConsole } from './mount_paths.ts'
import { ExceptionDiagnoser } from './ai/diagnoser.ts'
import { QueueBoard } from './queues/board.ts'

/**
 * What `atrium.console` resolves to: the store, the recorder and its
 * watchers, the session gate and the access gates.
 */
export class ConsoleManager {
  readonly config: ResolvedConsoleConfig
  readonly store: ConsoleStore
  readonly recorder: ConsoleRecorder
  readonly sessions?: DashboardSessions
  readonly gates: ConsoleGates
  readonly requestWatcher: RequestWatcher
  /** The event-loop watch behind `overloadProtection`, absent when it is off */
  readonly overload?: OverloadMonitor
  /** Pushes new entries to open dashboards; set by `start()` when the live tail is on */
  liveTail?: LiveTail
  /** CPU profiles, absent unless `profiling.enabled` (then no inspector session exists) */
  readonly profiler?: CpuProfiler
  /** Prunes one at a time under the prune lock, and on `prune.intervalMs` once started */
  readonly pruner: PruneScheduler
  /** Evaluates `alerts.rules` on its timer once started; absent without `alerts` */
  readonly alerts?: AlertEvaluator
  /** Asks `ai.model` about exception entries; absent without `ai` (the route answers 501) */
  readonly diagnoser?: ExceptionDiagnoser
  /** The queue and schedule managers of `queueManagers`, `scheduleManagers` and `watchers` */
  readonly queues: QueueBoard
  #exceptionWatcher: ExceptionWatcher
  #crashWatcher?: ProcessCrashWatcher
  #queryWatchers: QueryWatcher[] = []
  #logWatcher?: LogWatcher
  #others: { uninstall(): void }[] = []
  #app: ApplicationService
  #logger?: Logger
  #started = false

  constructor(
    app: ApplicationService,
    config: ResolvedConsoleConfig,
    store: ConsoleStore,
    logger?: Logger
  ) {
    this.#app = app
    this.#logger = logger
    this.config = config
    this.store = store
    rememberMountedConsole(config)
    this.recorder = new ConsoleRecorder(config, store, logger)
    this.sessions = config.dashboardAuth
      ? new DashboardSessions(config.dashboardAuth, config.path, logger)
      : undefined
    this.gates = new ConsoleGates(config, this.sessions, app.inProduction, logger)
    if (config.enabled && config.profiling.enabled) {
      this.profiler = new CpuProfiler(config.profiling, this.recorder)
    }
    this.requestWatcher = new RequestWatcher(config, this.recorder, {
      customIp: typeof app.config.get('app.http.getIp', undefined) === 'function',
      profiler: this.profiler,
    })
    this.#exceptionWatcher = new ExceptionWatcher(config, this.recorder)
    this.pruner = new PruneScheduler(store, config.prune, logger)
    this.queues = new QueueBoard(config.queueManagers, config.scheduleManagers, logger)
    if (config.exceptions.processCrashes) {
      this.#crashWatcher = new ProcessCrashWatcher(
        config,
        this.recorder,
        config.exceptions.processCrashes.flushTimeoutMs
      )
    }
    if (config.alerts) {
      this.alerts = new AlertEvaluator(config.alerts, store, config.redact, logger)
    }
    if (config.ai) {
      this.diagnoser = new ExceptionDiagnoser(config.ai, config, store, logger)
    }
    if (config.overloadProtection) {
      this.overload = new OverloadMonitor(
        config.overloadProtection,
        (paused) => {
          this.recorder.paused = paused
        },
        logger
      )
    }
  }

  /**
   * Whether the dashboard gets a live tail: `ui.liveTail` is on and the app
   * registers `@adonisjs/transmit`'s provider. Known before `start()`, so the
   * routes can be mounted first.
   */
  get liveTailAvailable() {
    return (
      this.config.ui.enabled &&
      this.config.ui.liveTail &&
      this.#app.container.hasBinding('transmit')
    )
  }

  /** The app's logger, where the console's parts warn */
  get logger() {
    return this.#logger
  }

  /** Where this app's HTTP server listens, for the requests the console replays */
  async ownUrl(): Promise<string> {
    return loopbackUrl(await this.#app.container.make('server'))()
  }

  /** What `GET {path}/api/health` reports about recording */
  recorderState() {
    const overload = this.overload
    return {
      state: this.recorder.paused ? 'paused' : 'running',
      pausedSince: overload?.pausedSince ?? null,
      pauses: overload?.pauses ?? 0,
      eventLoopLagP99Ms: overload?.lastLagMs ?? null,
      overloadProtection: this.config.overloadProtection,
      pending: this.recorder.pending,
      written: this.recorder.written,
      dropped: this.recorder.dropped,
      failed: this.recorder.failed,
      exceptionsWhilePaused: this.recorder.exceptionsWhilePaused,
    }
  }

  /**
   * Installs the watchers and starts the flush timer (web and test
   * environments). A `worker` (`node ace queue:work`) records without the
   * live tail and leaves pruning to the web instances.
   */
  async start(options: { worker?: boolean } = {}) {
    if (this.#started || !this.config.enabled) return
    // a watcher of a package that is not installed is a boot error, not a silent gap
    for (const watcher of this.config.watchers) {
      if (watcher.package) {
        assertPackagesInstalled(
          [watcher.package],
          `watchers.${watcher.name}() in config/console.ts`
        )
      }
    }
    this.#started = true
    // not awaited: a slow backend must not hold the boot, and the API waits for its own manager;
    // a worker serves no API, so it opens no manager's connection
    if (!options.worker) void this.queues.init()
    this.#exceptionWatcher.install()
    this.#crashWatcher?.install()
    for (const watcher of this.config.watchers) {
      if (watcher.install) {
        const { startCustomWatcher } = await import('./extensions/custom_watchers.ts')
        const custom = { ...watcher, install: watcher.install }
        this.#others.push(
          await startCustomWatcher(this.#app, this.config, this.recorder, custom, this.#logger)
        )
      } else if (watcher.name === 'queries') {
        const query = new QueryWatcher(this.config, this.recorder, watcher.options)
        query.install(await this.#app.container.make('lucid.db'))
        this.#queryWatchers.push(query)
      } else if (watcher.name === 'logs') {
        this.#logWatcher = new LogWatcher(this.config, this.recorder, watcher.options)
        this.#logWatcher.install(await this.#app.container.make('logger'))
      } else if (watcher.name === 'http') {
        const http = new HttpClientWatcher(this.config, this.recorder, watcher.options)
        http.install()
        this.#others.push(http)
      } else if (watcher.name === 'events') {
        const events = new EventWatcher(this.config, this.recorder, watcher.options)
        events.install((await this.#app.container.make('emitter')) as unknown as EmitterLike)
        this.#others.push(events)
      } else if (watcher.name === 'schedules') {
        const schedules = new ScheduleWatcher(this.config, this.recorder, watcher.options)
        schedules.install(scheduleRunChannel)
        this.#others.push(schedules)
      } else if (watcher.name === 'features') {
        const features = new FeatureWatcher(this.config, this.recorder)
        features.install()
        this.#others.push(features)
      } else {
        await this.#startIntegration(watcher.name, watcher.options)
      }
    }
    if (this.liveTailAvailable && !options.worker) await this.#startLiveTail()
    this.recorder.start()
    this.overload?.start()
    if (!options.worker) {
      this.pruner.start()
      this.alerts?.start()
    }
  }

  async #startLiveTail() {
    const transmit = (await this.#app.container.make('transmit' as any)) as TransmitLike
    const liveTail = new LiveTail(transmit, {
      // with a transport, dashboards on other instances listen where this one cannot see
      fansOut: !!this.#app.config.get('transmit.transport', null),
      paused: () => this.recorder.paused,
    })
    liveTail.authorize((ctx) => this.gates.canRead(ctx))
    this.recorder.onWritten = (entries) => liveTail.publish(entries)
    this.liveTail = liveTail
  }

  /** The watchers of optional packages: Bentocache, Redis, mail, queue */
  async #startIntegration(name: string, options: Record<string, unknown>) {
    const container = this.#app.container
    if (name === 'cache') {
      const { tracingChannels } = await importOptional<typeof import('@adonisjs/cache')>(
        '@adonisjs/cache',
        'watchers.cache() in config/console.ts'
      )
      const cache = new CacheWatcher(this.config, this.recorder, options)
      cache.install(tracingChannels.cacheOperation, await container.make('emitter'))
      this.#others.push(cache)
    } else if (name === 'redis') {
      if (!container.hasBinding('redis')) {
        this.#logger?.warn(
          'console watchers.redis() records nothing: @adonisjs/redis is installed but its provider is not registered in adonisrc.ts'
        )
        return
      }
      const redis = new RedisWatcher(this.config, this.recorder, options)
      redis.install((await container.make('redis')) as unknown as RedisManagerLike)
      this.#others.push(redis)
    } else if (name === 'mail') {
      const mail = new MailWatcher(this.config, this.recorder, options)
      mail.install((await container.make('emitter')) as any)
      this.#others.push(mail)
    } else if (name === 'jobs') {
      // the channels' owner, which @adonisjs/queue re-exports (a separate peer under pnpm)
      const { tracingChannels } = await importOptional<typeof import('@boringnode/queue')>(
        '@boringnode/queue',
        'watchers.jobs() in config/console.ts'
      )
      const jobs = new JobsWatcher(this.config, this.recorder, options)
      jobs.install(tracingChannels)
      this.#others.push(jobs)
    }
  }

  /**
   * Deletes what `prune` in config/console.ts says is too old or too many,
   * under the prune lock (`E_CONSOLE_PRUNE_BUSY` while another prune holds it)
   */
  prune(now?: number): Promise<PruneResult> {
    return this.pruner.prune(now)
  }

  /** Stops recording and writes what is buffered */
  async shutdown() {
    forgetMountedConsole(this.config)
    this.overload?.stop()
    await this.pruner.stop()
    await this.alerts?.stop()
    this.#exceptionWatcher.uninstall()
    for (const watcher of this.#queryWatchers) watcher.uninstall()
    this.#logWatcher?.uninstall()
    for (const watcher of this.#others) watcher.uninstall()
    await this.profiler?.shutdown()
    await this.recorder.stop()
    // after the last flush: a crash while shutting down is still recorded
    this.#crashWatcher?.uninstall()
    await this.store.close?.()
  }
}
