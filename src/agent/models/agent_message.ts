import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { ModelToolCall } from '../model/port.ts'
import type { MessageAttachment } from '../store/contract.ts'
import { consumeDate, consumeNumber, jsonColumn } from './columns.ts'

/**
 * One message of a thread (`agent_messages`), ordered by id.
 */
export default class AgentMessage extends BaseModel {
  static table = 'agent_messages'

  @column({ isPrimary: true, consume: consumeNumber })
  declare id: number

  @column()
  declare threadId: string

  @column()
  declare runId: string | null

  @column()
  declare role: 'user' | 'assistant' | 'tool'

  @column()
  declare content: string

  @column(jsonColumn)
  declare toolCalls: ModelToolCall[] | null

  @column(jsonColumn)
  declare toolResults: Array<{ toolCallId: string; toolName: string; output: unknown }> | null

  /** Follow-up questions proposed after this answer (`followUps` in config/agent.ts) */
  @column(jsonColumn)
  declare followUps: string[] | null

  /** The files a user message carried: `{ id, name, contentType, size }`, the bytes in the staging */
  @column(jsonColumn)
  declare attachments: MessageAttachment[] | null

  @column({ consume: consumeDate })
  declare createdAt: Date
}
