import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { CostSource } from '../store/contract.ts'
import { consumeBoolean, consumeDate, consumeNumber } from './columns.ts'

/**
 * One model call's tokens (`agent_usage`) in disjoint buckets; `usageKnown`
 * is false when the provider reported none. `cost` (micro-units of the
 * currency) is set when the row is written and never repriced.
 */
export default class AgentUsage extends BaseModel {
  static table = 'agent_usage'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare runId: string

  @column()
  declare threadId: string

  @column()
  declare actorRef: string

  @column()
  declare agentName: string

  @column()
  declare model: string

  @column()
  declare kind: 'step'

  @column({ consume: consumeNumber })
  declare step: number

  @column({ consume: consumeBoolean })
  declare usageKnown: boolean

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

  /** The `agent_pricing` row an estimated cost used */
  @column({ consume: consumeNumber })
  declare priceId: number | null

  @column({ consume: consumeNumber })
  declare cost: number

  @column()
  declare costSource: CostSource

  @column()
  declare day: string

  @column({ consume: consumeDate })
  declare createdAt: Date
}
