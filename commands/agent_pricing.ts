import { BaseCommand, flags } from '@adonisjs/core/ace'
import type { CommandOptions } from '@adonisjs/core/types/ace'
import { readPrice } from '../src/agent/pricing/config.ts'
import { formatMicros } from '../src/agent/pricing/money.ts'

/**
 * Lists the price in effect for every priced model, or with `--set` inserts
 * a new price effective now. Asks nothing: every value is a flag, so it
 * runs the same from a terminal, a deploy script or CI.
 */
export default class AgentPricing extends BaseCommand {
  static commandName = 'agent:pricing'
  static description = 'List the agent gateway model prices, or set one with --set'
  static options: CommandOptions = { startApp: true }

  @flags.string({ description: 'Model id to price, e.g. claude-sonnet-4-5' })
  declare set?: string

  @flags.string({ description: 'Input price per million tokens, e.g. 3 or "3.75"' })
  declare input?: string

  @flags.string({ description: 'Output price per million tokens' })
  declare output?: string

  @flags.string({ description: 'Cache read price per million tokens (default: the input price)' })
  declare cacheRead?: string

  @flags.string({
    description: 'Cache write price per million tokens (default: the input price)',
  })
  declare cacheWrite?: string

  async run() {
    const manager = await this.app.container.make('atrium.agent')
    const pricing = manager.config.store.pricing
    if (!pricing) {
      this.logger.error('The agent store in config/agent.ts does not keep model prices')
      this.exitCode = 1
      return
    }
    if (this.set === undefined) {
      const rows = await pricing.current()
      if (!rows.length) {
        this.logger.info(
          'No model has a price yet. Set one with --set <modelId> --input <n> --output <n>'
        )
        return
      }
      const table = this.ui
        .table()
        .head(['Model', 'Input /1M', 'Output /1M', 'Cache read /1M', 'Cache write /1M', 'Since'])
      for (const row of rows) {
        table.row([
          row.modelId,
          formatMicros(row.inputPricePer1m),
          formatMicros(row.outputPricePer1m),
          formatMicros(row.cacheReadPricePer1m ?? row.inputPricePer1m),
          formatMicros(row.cacheWritePricePer1m ?? row.inputPricePer1m),
          row.effectiveFrom.toISOString(),
        ])
      }
      table.render()
      return
    }

    const modelId = this.set.trim()
    if (!modelId || modelId.length > 191) {
      this.logger.error('--set needs a model id of 1 to 191 characters')
      this.exitCode = 1
      return
    }
    const price = readPrice({
      inputPricePer1m: this.input,
      outputPricePer1m: this.output,
      cacheReadPricePer1m: this.cacheRead,
      cacheWritePricePer1m: this.cacheWrite,
    })
    if (Array.isArray(price)) {
      const flag = { inputPricePer1m: '--input', outputPricePer1m: '--output' }[price[0]]
      const name = flag ?? `--${price[0].startsWith('cacheRead') ? 'cache-read' : 'cache-write'}`
      this.logger.error(`${name} ${price[1].replace(/^"[^"]+" /, '')}`)
      this.exitCode = 1
      return
    }
    const row = await pricing.setPrice(modelId, price)
    this.logger.success(
      `Priced ${row.modelId}: input ${formatMicros(row.inputPricePer1m)}, output ${formatMicros(row.outputPricePer1m)} per million tokens, from ${row.effectiveFrom.toISOString()}`
    )
  }
}
