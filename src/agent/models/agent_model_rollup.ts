import { compose } from '@adonisjs/core/helpers'
import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'
import { withSpendColumns } from './spend_columns.ts'

/**
 * Spend of one UTC day and model (`agent_model_rollups`): calls, tokens and
 * cost (micro-units of the currency), incremented with each usage row.
 */
export default class AgentModelRollup extends compose(BaseModel, withSpendColumns) {
  static table = 'agent_model_rollups'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare day: string

  @column()
  declare model: string
}
