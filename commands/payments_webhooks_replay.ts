import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'

/**
 * Re-runs stored, already verified webhook events through billing sync and
 * the handlers: every failed one (`--failed`), one id, or one provider's.
 * An event already processed runs its handler again only with `--force`.
 * Never prompts, so it runs the same in CI and in a terminal.
 */
export default class PaymentsWebhooksReplay extends BaseCommand {
  static commandName = 'payments:webhooks:replay'
  static description = 'Re-run stored webhook events (failed ones, one id or one provider)'
  static options: CommandOptions = { startApp: true }

  @flags.boolean({ description: 'Replay every failed event' })
  declare failed?: boolean

  @flags.string({ description: 'Replay the event with this id' })
  declare id?: string

  @flags.string({ description: 'Only events of this provider' })
  declare provider?: string

  @flags.boolean({
    description: 'Also re-run events already processed (their handlers run again)',
  })
  declare force?: boolean

  async run() {
    if (!this.failed && !this.id && !this.provider) {
      this.exitCode = 1
      this.logger.error('Choose what to replay: --failed, --id=<event id> and/or --provider=<name>')
      return
    }
    const manager = await this.app.container.make('atrium.payments')
    const outcomes = await manager.replay({
      failed: this.failed,
      eventId: this.id,
      provider: this.provider,
      force: this.force,
    })
    if (outcomes.length === 0) {
      this.logger.info('No stored event matches')
      return
    }
    if (this.force && outcomes.some(({ row }) => row.status === 'processed')) {
      this.logger.warning('--force: re-running events that were already processed')
    }
    for (const { row, status, error } of outcomes) {
      const line = `${row.provider} ${row.event_id} (${row.type}): ${status}${error ? ` - ${error}` : ''}`
      if (status === 'processed') this.logger.success(line)
      else this.logger.error(line)
    }
    if (outcomes.some(({ status }) => status !== 'processed')) {
      this.exitCode = 1
    }
  }
}
