import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate } from './columns.ts'

/**
 * One row per gateway event: the idempotency ledger.
 */
export default class BillingWebhookEvent extends BaseModel {
  static table = 'billing_webhook_events'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare provider: string

  @column()
  declare eventId: string

  @column()
  declare type: string

  @column()
  declare status: 'recorded' | 'processed' | 'failed'

  @column()
  declare attempts: number

  @column()
  declare raw: string

  @column()
  declare normalized: string

  @column()
  declare error: string | null

  @column()
  declare traceId: string | null

  @column({ consume: consumeDate })
  declare processedAt: Date | null

  @column({ consume: consumeDate })
  declare createdAt: Date | null

  @column({ consume: consumeDate })
  declare updatedAt: Date | null
}
