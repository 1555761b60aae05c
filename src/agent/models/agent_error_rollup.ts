import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeNumber } from './columns.ts'

/** Failed runs of one UTC day and error code (`agent_error_rollups`) */
export default class AgentErrorRollup extends BaseModel {
  static table = 'agent_error_rollups'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare day: string

  /** `unknown` for a failure without a code */
  @column()
  declare errorCode: string

  @column({ consume: consumeNumber })
  declare runsFailed: number
}
