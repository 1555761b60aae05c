import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'

/**
 * Spend of one UTC day and actor (`agent_actor_rollups`): calls, tokens and
 * cost (micro-units of the currency), incremented with each usage row.
 */
export default class AgentActorRollup extends BaseModel {
  static table = 'agent_actor_rollups'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare day: string

  @column()
  declare actorRef: string

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
