import type { ApplicationService } from '@adonisjs/core/types'
import type { ConsoleManager } from './manager.ts'
import type { StoreDescription } from './stores/contract.ts'
import { hasPruneRules } from './retention/config.ts'

/** One watcher as `console:doctor` reports it */
export interface WatcherReport {
  name: string
  /** The optional package it reads from, when it has one */
  package: string | null
  /** The package resolves from the app (true for built-in watchers) */
  installed: boolean
}

/** What `console:doctor` prints (and `--json` prints as is) */
export interface DoctorReport {
  /** No problem found */
  ok: boolean
  /** Misconfigurations that deny access or lose entries: exit code 1 */
  problems: string[]
  /** Worth knowing, nothing lost */
  warnings: string[]
  environment: { production: boolean }
  gates: {
    summary: string
    dashboardAuth: { modes: string[]; ttlMs: number } | null
    authorizer: boolean
    authorizeAction: boolean
    /** `off`, or how the MCP endpoint is gated and where it answers */
    mcp: string
    clientErrors: { enabled: boolean; maxBodyBytes: number; perMinute: number; burst: number }
  }
  storage: StoreDescription
  retention: {
    afterMs: number | null
    perTypeMs: Record<string, number>
    maxRows: Record<string, number>
    /** Age of the rollup rows pruned; the request cutoff when null */
    rollupsAfterMs: number | null
    /** ms between each instance's prunes; null when only the command and the API prune */
    intervalMs: number | null
    /** `lease row`, `custom` or `off` */
    lock: string
    /** The types handed to `archive.sink` before they are deleted */
    archived: string[]
  }
  recorder: {
    enabled: boolean
    sampling: Record<string, number>
    overloadProtection: false | { maxEventLoopLagMs: number; startupGraceMs: number }
    /** This process's recorder; a web server reports its own at GET {path}/api/health */
    state: ReturnType<ConsoleManager['recorderState']>['state']
    dropped: number
    failed: number
  }
  watchers: WatcherReport[]
  /** `alerts`: its rules by name, its channels and how often they are checked; null when off */
  alerts: { rules: string[]; channels: string[]; intervalMs: number } | null
  /** The queue managers by driver and how many schedule managers the dashboard lists */
  managers: { queues: string[]; schedules: number }
  /** `extensions` by name */
  extensions: string[]
  /** `ai`: the model exception diagnosis calls; null when off */
  ai: { model: string } | null
}

function resolves(name: string) {
  try {
    import.meta.resolve(name)
    return true
  } catch {
    return false
  }
}

/**
 * Reads the effective console setup of an app (gates, storage, retention,
 * recorder, watchers and their packages) and lists what denies access or
 * loses entries as problems.
 */
export async function diagnose(app: ApplicationService, manager: ConsoleManager) {
  const { config } = manager
  const problems: string[] = []
  const warnings: string[] = []

  if (!config.enabled) warnings.push('"enabled" is false in config/console.ts: nothing is recorded')
  if (app.inProduction && !config.authorizer && !config.dashboardAuth) {
    problems.push(
      'production without "authorizer" or "dashboardAuth": the API denies every read (403). Set one in config/console.ts'
    )
  }
  if (!config.authorizeAction) {
    warnings.push('no "authorizeAction": mutations (prune now) are denied')
  }

  const storage: StoreDescription = (await manager.store.describe?.()) ?? {
    driver: config.storage.driver,
    ready: true,
  }
  if (!storage.ready) problems.push(`storage: ${storage.problem ?? 'entries cannot be written'}`)
  if (storage.ready && storage.rollups === false) {
    problems.push(
      'storage: table "console_rollups" is missing, so the health page shows no traffic: run "node ace configure adonis-atrium" to publish the console_rollups migration, then "node ace migration:run"'
    )
  }
  if (storage.ready && storage.search === false) {
    problems.push(
      'storage: the console_entries_search migration has not run, so search answers 503: run "node ace configure adonis-atrium" to publish it, then "node ace migration:run"'
    )
  }
  if (storage.ready && storage.leases === false && config.prune.lock === 'storage') {
    problems.push(
      'storage: table "console_leases" is missing, so every prune fails: run "node ace configure adonis-atrium" to publish the console_leases migration, then "node ace migration:run" (or set prune.lock to false)'
    )
  }
  if (storage.driver === 'memory' && app.inProduction) {
    warnings.push('storage is stores.memory(): entries are lost on every restart')
  }
  if (storage.driver === 'embedded' && storage.owned && app.inProduction) {
    warnings.push(
      `storage is stores.embedded() in production: this instance's entries stay in ${storage.file}, on its own disk (lost with the container, not seen by other instances). Use stores.database() to share them`
    )
  }

  const prune = config.prune
  if (!hasPruneRules(prune)) {
    warnings.push('no retention ("prune"): console_entries grows until you prune it')
  }

  const watchers: WatcherReport[] = [
    { name: 'requests', package: null, installed: true },
    { name: 'exceptions', package: null, installed: true },
  ]
  for (const watcher of config.watchers) {
    const installed = watcher.package ? resolves(watcher.package) : true
    watchers.push({ name: watcher.name, package: watcher.package ?? null, installed })
    if (!installed) {
      problems.push(
        `watchers.${watcher.name}() needs "${watcher.package}", which is not installed: the web server refuses to boot. Run: npm install ${watcher.package}`
      )
    } else if (watcher.name === 'redis' && !app.container.hasBinding('redis')) {
      problems.push(
        'watchers.redis(): the @adonisjs/redis provider is not registered in adonisrc.ts, so no command is recorded'
      )
    }
  }
  if (config.clientErrors.enabled && !resolves('@vinejs/vine')) {
    problems.push(
      '"clientErrors" needs "@vinejs/vine", which is not installed: every report fails. Run: npm install @vinejs/vine'
    )
  }

  if (config.mcp) {
    if (config.mcp.token === null && app.inProduction) {
      problems.push(
        '"mcp: true" serves recorded data without a token: the web server refuses to boot in production. Use mcp: { token: env.get(\'CONSOLE_MCP_TOKEN\') }'
      )
    }
    const missing = ['@modelcontextprotocol/sdk', 'zod'].filter(
      (name) => !resolves(name === 'zod' ? name : `${name}/server/mcp.js`)
    )
    if (missing.length) {
      problems.push(
        `"mcp" needs ${missing.map((name) => `"${name}"`).join(', ')}, not installed: the web server refuses to boot. Run: npm install ${missing.join(' ')}`
      )
    }
  }

  const recorder = manager.recorderState()
  const report: DoctorReport = {
    ok: problems.length === 0,
    problems,
    warnings,
    environment: { production: app.inProduction },
    gates: {
      summary: manager.gates.describe(),
      dashboardAuth: config.dashboardAuth
        ? { modes: config.dashboardAuth.modes, ttlMs: config.dashboardAuth.ttlMs }
        : null,
      authorizer: typeof config.authorizer === 'function',
      authorizeAction: typeof config.authorizeAction === 'function',
      mcp: !config.mcp
        ? 'off'
        : `${config.mcp.token === null ? 'no token (development only)' : 'bearer token'} at ${config.mcp.path}`,
      clientErrors: config.clientErrors,
    },
    storage,
    retention: {
      afterMs: prune.after ?? null,
      perTypeMs: prune.perType as Record<string, number>,
      maxRows: prune.maxRows as Record<string, number>,
      rollupsAfterMs: prune.rollupsAfter ?? null,
      intervalMs: prune.intervalMs ?? null,
      lock: prune.lock === 'storage' ? 'lease row' : prune.lock === false ? 'off' : 'custom',
      archived: prune.archive?.types ?? [],
    },
    recorder: {
      enabled: config.enabled,
      sampling: config.sampling as Record<string, number>,
      overloadProtection: config.overloadProtection,
      state: recorder.state,
      dropped: recorder.dropped,
      failed: recorder.failed,
    },
    watchers,
    alerts: config.alerts
      ? {
          rules: config.alerts.rules.map((rule) => rule.name),
          channels: config.alerts.channels.map((channel) => channel.name),
          intervalMs: config.alerts.intervalMs,
        }
      : null,
    managers: {
      queues: config.queueManagers.map((queueManager) => queueManager.driver),
      schedules: config.scheduleManagers.length,
    },
    extensions: config.extensions.map((extension) => extension.name),
    ai: config.ai ? { model: config.ai.label } : null,
  }
  return report
}
