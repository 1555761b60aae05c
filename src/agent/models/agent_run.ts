import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { RunStatus } from '../store/contract.ts'
import { consumeDate, consumeNumber } from './columns.ts'

/**
 * One chat turn (`agent_runs`).
 */
export default class AgentRun extends BaseModel {
  static table = 'agent_runs'
  static selfAssignPrimaryKey = true

  @column({ isPrimary: true })
  declare id: string

  @column()
  declare threadId: string

  @column()
  declare actorRef: string

  @column()
  declare agentName: string

  @column()
  declare status: RunStatus

  @column()
  declare errorCode: string | null

  @column({ consume: consumeNumber })
  declare steps: number

  /** Model calls the gateway sent again after a retryable failure */
  @column({ consume: consumeNumber })
  declare retries: number

  @column({ consume: consumeDate })
  declare createdAt: Date

  @column({ consume: consumeDate })
  declare finishedAt: Date | null

  /** Measured by the process that ran it */
  @column({ consume: consumeNumber })
  declare durationMs: number | null
}
