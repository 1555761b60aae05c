import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate, consumeNumber } from './columns.ts'

/**
 * One effective-dated price of a model (`agent_pricing`), in micro-units of
 * the currency per million tokens. Rows are only inserted: the newest row
 * whose `effectiveFrom` has passed is the model's price.
 */
export default class AgentPricing extends BaseModel {
  static table = 'agent_pricing'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare modelId: string

  @column({ columnName: 'input_price_per_1m', consume: consumeNumber })
  declare inputPricePer1m: number

  @column({ columnName: 'output_price_per_1m', consume: consumeNumber })
  declare outputPricePer1m: number

  /** Null: billed at the input price */
  @column({ columnName: 'cache_write_price_per_1m', consume: consumeNumber })
  declare cacheWritePricePer1m: number | null

  /** Null: billed at the input price */
  @column({ columnName: 'cache_read_price_per_1m', consume: consumeNumber })
  declare cacheReadPricePer1m: number | null

  @column({ consume: consumeDate })
  declare effectiveFrom: Date

  @column({ consume: consumeDate })
  declare createdAt: Date
}
