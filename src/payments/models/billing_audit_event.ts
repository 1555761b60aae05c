import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate } from './columns.ts'

/**
 * Audit trail: webhook.rejected rows.
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

  @column({ consume: consumeDate })
  declare createdAt: Date | null
}
