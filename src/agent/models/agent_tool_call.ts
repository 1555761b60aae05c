import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { ToolCallStatus } from '../store/contract.ts'
import { consumeDate, consumeNumber, jsonColumn } from './columns.ts'

/**
 * One tool execution (`agent_tool_calls`), unique per run and model tool-call id.
 */
export default class AgentToolCall extends BaseModel {
  static table = 'agent_tool_calls'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare runId: string

  @column()
  declare threadId: string

  @column()
  declare actorRef: string

  @column()
  declare toolCallId: string

  @column()
  declare toolName: string

  @column()
  declare status: ToolCallStatus

  @column(jsonColumn)
  declare input: unknown

  @column(jsonColumn)
  declare output: unknown

  @column()
  declare errorCode: string | null

  @column({ consume: consumeNumber })
  declare executionMs: number | null

  @column({ consume: consumeDate })
  declare createdAt: Date

  @column({ consume: consumeDate })
  declare updatedAt: Date
}
