import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'

/**
 * Runs of one UTC day and agent whose duration fell in one log-scale bucket
 * (`agent_duration_rollups`); `bucketUpperBound` of the governance
 * histogram gives the bucket's largest duration in milliseconds.
 */
export default class AgentDurationRollup extends BaseModel {
  static table = 'agent_duration_rollups'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare day: string

  @column()
  declare agentName: string

  @column({ consume: consumeNumber })
  declare bucket: number

  @column({ consume: consumeNumber })
  declare runs: number
}
