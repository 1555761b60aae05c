import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'

/**
 * One day of one model, actor and agent (`agent_rollups`): tokens, cost
 * (micro-units of the currency) and finished runs, incremented in the
 * transaction of each usage row and run end.
 */
export default class AgentRollup extends BaseModel {
  static table = 'agent_rollups'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare day: string

  @column()
  declare model: string

  @column()
  declare actorRef: string

  @column()
  declare agentName: string

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

  @column({ consume: consumeNumber })
  declare runsSucceeded: number

  @column({ consume: consumeNumber })
  declare runsFailed: number

  @column({ consume: consumeNumber })
  declare runsCancelled: number
}
