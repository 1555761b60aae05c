import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { hasPruneRules } from '../src/console/retention/config.ts'

/**
 * Deletes console entries older than `prune.after` (or `prune.perType`) and
 * beyond `prune.maxRows`, in bounded batches, under the same lock as the
 * prunes each app instance schedules (`prune.intervalMs`), so a cron job and
 * a running fleet never prune at once.
 */
export default class ConsolePrune extends BaseCommand {
  static commandName = 'console:prune'
  static description = 'Delete console entries past the retention set in config/console.ts'
  static options: CommandOptions = { startApp: true }

  async run() {
    const manager = await this.app.container.make('atrium.console')
    const prune = manager.config.prune
    if (!hasPruneRules(prune)) {
      this.logger.warning(
        'Nothing to prune: set "prune.after", "prune.perType", "prune.maxRows" or "prune.rollupsAfter" in config/console.ts'
      )
      return
    }
    let deleted: Awaited<ReturnType<typeof manager.prune>>
    try {
      deleted = await manager.prune()
    } catch (error) {
      // busy, a failed archive sink, a missing console_leases table: each message names its fix
      this.exitCode = 1
      const cause = (error as Error).cause as Error | undefined
      this.logger.error(`${(error as Error).message}${cause ? ` (${cause.message})` : ''}`)
      return
    }
    const total = Object.values(deleted).reduce((sum, count) => sum + (count ?? 0), 0)
    const detail = Object.entries(deleted)
      .map(([type, count]) => `${type}: ${count}`)
      .join(', ')
    this.logger.success(`Pruned ${total} console entries${detail ? ` (${detail})` : ''}`)
  }
}
