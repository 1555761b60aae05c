import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

function duration(ms: number) {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`
  if (ms % 60_000 === 0) return `${ms / 60_000}m`
  return `${ms}ms`
}

function bytes(size: number) {
  if (size >= 1024 * 1024) return `${(size / 1024 / 1024).toFixed(1)} MB`
  if (size >= 1024) return `${(size / 1024).toFixed(1)} KB`
  return `${size} bytes`
}

/**
 * Prints the console's effective setup: gates, storage, retention, recorder
 * and watchers with their optional packages. Exits 1 naming each problem
 * that denies access or loses entries (production without an authorizer, a
 * missing table, a watcher whose package is absent). Never prompts.
 */
export default class ConsoleDoctor extends BaseCommand {
  static commandName = 'console:doctor'
  static description =
    'Check config/console.ts: gates, storage, retention, recorder, watchers, alerts, queues, extensions and AI'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Print the report as one JSON object' })
  declare json?: boolean

  async run() {
    const { diagnose } = await import('../src/console/doctor.ts')
    const manager = await this.app.container.make('atrium.console')
    const report = await diagnose(this.app, manager)
    if (!report.ok) this.exitCode = 1
    if (this.json) {
      this.logger.log(JSON.stringify(report))
      return
    }

    const { gates, storage, retention, recorder } = report
    const yesNo = (value: boolean) => (value ? 'set' : 'not set')
    const lines = [
      `Gates: ${gates.summary}`,
      `  dashboardAuth: ${gates.dashboardAuth ? `modes ${gates.dashboardAuth.modes.join(', ')}, ttl ${duration(gates.dashboardAuth.ttlMs)}` : 'not set'}`,
      `  authorizer: ${yesNo(gates.authorizer)}; authorizeAction: ${yesNo(gates.authorizeAction)}; mcp: ${gates.mcp}`,
      `  client errors endpoint: ${gates.clientErrors.enabled ? `on (${gates.clientErrors.maxBodyBytes} bytes, ${gates.clientErrors.perMinute}/min, burst ${gates.clientErrors.burst})` : 'off'}`,
      `Storage: ${storage.driver}${storage.connection ? `, connection ${storage.connection}` : ''}${storage.client ? ` (${storage.client})` : ''}${storage.file ? `, file ${storage.file}` : ''}${storage.bytes !== undefined ? ` (${bytes(storage.bytes)})` : ''}${storage.owned === true ? ', created and migrated by the console' : storage.owned === false ? ', defined in config/database.ts' : ''}${storage.threaded ? ', writer thread' : ''}; ${storage.ready ? 'ready' : 'NOT READY'}${storage.rollups === false ? '; NO ROLLUPS TABLE' : ''}${storage.search === false ? '; NO SEARCH INDEX' : ''}${storage.leases === false ? '; NO LEASES TABLE' : ''}`,
      ...(storage.tables ? [`  tables: ${storage.tables.join(', ') || 'none'}`] : []),
      `Retention: after ${retention.afterMs === null ? 'never' : duration(retention.afterMs)}` +
        Object.entries(retention.perTypeMs)
          .map(([type, ms]) => `, ${type} after ${duration(ms)}`)
          .join('') +
        Object.entries(retention.maxRows)
          .map(([type, rows]) => `, ${type} newest ${rows}`)
          .join('') +
        (retention.rollupsAfterMs === null
          ? ''
          : `, rollups after ${duration(retention.rollupsAfterMs)}`) +
        `; ${retention.intervalMs === null ? 'no scheduled prune' : `pruned every ${duration(retention.intervalMs)}`}, lock ${retention.lock}` +
        (retention.archived.length ? `; archived first: ${retention.archived.join(', ')}` : ''),
      `Recorder: ${recorder.enabled ? 'enabled' : 'disabled'}, ${recorder.state} in this process; sampling ${JSON.stringify(recorder.sampling)}; overload protection ${recorder.overloadProtection ? `${recorder.overloadProtection.maxEventLoopLagMs} ms p99` : 'off'}`,
      `Watchers: ${report.watchers
        .map((watcher) =>
          watcher.package
            ? `${watcher.name} (${watcher.package} ${watcher.installed ? 'found' : 'MISSING'})`
            : watcher.name
        )
        .join(', ')}`,
      `Alerts: ${report.alerts ? `${report.alerts.rules.join(', ')} to ${report.alerts.channels.join(', ')}, checked every ${duration(report.alerts.intervalMs)}` : 'off'}`,
      `Queues: ${report.managers.queues.join(', ') || 'none'}; schedule managers: ${report.managers.schedules}; extensions: ${report.extensions.join(', ') || 'none'}; AI diagnosis: ${report.ai ? report.ai.model : 'off'}`,
    ]
    for (const line of lines) this.logger.log(line)
    for (const warning of report.warnings) this.logger.warning(warning)
    for (const problem of report.problems) this.logger.error(problem)
    if (report.ok) this.logger.success('No problem found')
  }
}
