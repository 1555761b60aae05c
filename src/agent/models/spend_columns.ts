import type { NormalizeConstructor } from '@adonisjs/core/types/helpers'
import { type BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'

/**
 * The spend figures every spend rollup keeps (`agent_rollups`,
 * `agent_model_rollups`, `agent_actor_rollups`): calls, the disjoint token
 * buckets and cost in micro-units of the currency.
 */
export function withSpendColumns<Model extends NormalizeConstructor<typeof BaseModel>>(
  superclass: Model
) {
  class SpendColumns extends superclass {
    @column({ consume: consumeNumber })
    declare modelCalls: number

    @column({ consume: consumeNumber })
    declare unknownUsageCalls: number

    @column({ consume: consumeNumber })
    declare unpricedCalls: number

    @column({ consume: consumeNumber })
    declare uncachedInputTokens: number

    @column({ consume: consumeNumber })
    declare cacheReadTokens: number

    @column({ consume: consumeNumber })
    declare cacheWriteTokens: number

    @column({ consume: consumeNumber })
    declare outputTokens: number

    @column({ consume: consumeNumber })
    declare reasoningTokens: number

    @column({ consume: consumeNumber })
    declare cost: number
  }
  return SpendColumns
}
