import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'

/** Finished runs of one UTC day and agent (`agent_run_rollups`), by outcome */
export default class AgentRunRollup extends BaseModel {
  static table = 'agent_run_rollups'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare day: string

  @column()
  declare agentName: string

  @column({ consume: consumeNumber })
  declare runsSucceeded: number

  @column({ consume: consumeNumber })
  declare runsFailed: number

  @column({ consume: consumeNumber })
  declare runsCancelled: number
}
