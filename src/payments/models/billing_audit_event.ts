import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate, consumeEpochMs } from './columns.ts'

/**
 * Audit trail: `webhook.rejected` counters, one row per provider, type and
 * reason per minute (the last sample's trace id, never a payload).
 */
export default class BillingAuditEvent extends BaseModel {
  static table = 'billing_audit_events'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare provider: string

  @column()
  declare type: string

  @column()
  declare reason: string | null

  @column()
  declare traceId: string | null

  @column()
  declare bucketKey: string

  /** Start of the minute this row counts */
  @column({ consume: consumeEpochMs })
  declare windowStart: Date | null

  @column()
  declare occurrences: number

  @column({ consume: consumeDate })
  declare createdAt: Date | null

  @column({ consume: consumeDate })
  declare updatedAt: Date | null
}
