import { compose } from '@adonisjs/core/helpers'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'
import { withSpendColumns } from './spend_columns.ts'

/**
 * One day of one model, actor and agent (`agent_rollups`): tokens, cost
 * (micro-units of the currency) and finished runs, incremented in the
 * transaction of each usage row and run end.
 */
export default class AgentRollup extends compose(BaseModel, withSpendColumns) {
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
  declare runsSucceeded: number

  @column({ consume: consumeNumber })
  declare runsFailed: number

  @column({ consume: consumeNumber })
  declare runsCancelled: number
}
