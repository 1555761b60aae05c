import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { pruneAttachments } from '../src/agent/attachments/prune.ts'

/**
 * Gives back the quota holds of dead instances whose lease ran out (the
 * built-in SQL quota store), then deletes staged attachments no message
 * of a live thread references once they are older than
 * `attachments.unreferencedTtlMs`: uploads never sent, files of deleted
 * threads and of truncated messages. Asks nothing, and a
 * second run (or two at once) deletes nothing more, so a cron job can run
 * it on every instance.
 */
export default class AgentPrune extends BaseCommand {
  static commandName = 'agent:prune'
  static description =
    'Give back expired quota holds; delete agent attachments no message references, past attachments.unreferencedTtlMs'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'List what would be deleted, delete nothing' })
  declare dryRun?: boolean

  async run() {
    const manager = await this.app.container.make('atrium.agent')
    const { attachments, store, quota } = manager.config
    const holds = await quota?.store.giveBackExpiredHolds?.({ dryRun: this.dryRun === true })
    if (holds) {
      this.logger.info(
        this.dryRun
          ? `Dry run: ${holds.holds} quota holds past their lease (${holds.tokens} tokens) would be given back`
          : `Gave back ${holds.holds} quota holds past their lease (${holds.tokens} tokens)`
      )
    }
    const olderThan = new Date(Date.now() - attachments.unreferencedTtlMs)
    let report: Awaited<ReturnType<typeof pruneAttachments>>
    try {
      report = await pruneAttachments({
        staging: attachments.staging,
        store,
        olderThan,
        dryRun: this.dryRun === true,
      })
    } catch (error) {
      // A staging or store that cannot be pruned: the message names what it lacks
      this.exitCode = 1
      this.logger.error((error as Error).message)
      return
    }
    const count = report.unreferenced.length
    if (this.dryRun) {
      for (const id of report.unreferenced) this.logger.info(`would delete ${id}`)
      this.logger.success(
        `Dry run: ${count} of ${report.examined} attachments older than ${olderThan.toISOString()} are unreferenced; nothing deleted`
      )
      return
    }
    this.logger.success(
      `Deleted ${count} unreferenced attachments (${report.examined} older than ${olderThan.toISOString()} examined)`
    )
  }
}
