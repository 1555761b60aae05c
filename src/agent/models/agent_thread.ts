import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate } from './columns.ts'

/**
 * One conversation of one actor (`agent_threads`); `deletedAt` marks a soft delete.
 */
export default class AgentThread extends BaseModel {
  static table = 'agent_threads'
  static selfAssignPrimaryKey = true

  @column({ isPrimary: true })
  declare id: string

  @column()
  declare actorRef: string

  @column()
  declare title: string | null

  @column()
  declare defaultAgent: string | null

  @column({ consume: consumeDate })
  declare deletedAt: Date | null

  @column({ consume: consumeDate })
  declare createdAt: Date

  @column({ consume: consumeDate })
  declare updatedAt: Date
}
