import { BaseCommand } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Deletes console entries older than `prune.after` (or `prune.perType`) and
 * beyond `prune.maxRows`, in bounded batches. Run it from cron or a scheduler.
 */
export default class ConsolePrune extends BaseCommand {
  static commandName = 'console:prune'
  static description = 'Delete console entries past the retention set in config/console.ts'
  static options: CommandOptions = { startApp: true }

  async run() {
    const manager = await this.app.container.make('atrium.console')
    const prune = manager.config.prune
    if (
      prune.after === undefined &&
      prune.rollupsAfter === undefined &&
      !Object.keys(prune.perType).length &&
      !Object.keys(prune.maxRows).length
    ) {
      this.logger.warning(
        'Nothing to prune: set "prune.after", "prune.perType", "prune.maxRows" or "prune.rollupsAfter" in config/console.ts'
      )
      return
    }
    const deleted = await manager.prune()
    const total = Object.values(deleted).reduce((sum, count) => sum + (count ?? 0), 0)
    const detail = Object.entries(deleted)
      .map(([type, count]) => `${type}: ${count}`)
      .join(', ')
    this.logger.success(`Pruned ${total} console entries${detail ? ` (${detail})` : ''}`)
  }
}
