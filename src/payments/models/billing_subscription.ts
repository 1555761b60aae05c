import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate, consumeEpochMs } from './columns.ts'

/**
 * A subscription as the gateways last reported it.
 */
export default class BillingSubscription extends BaseModel {
  static table = 'billing_subscriptions'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare provider: string

  @column()
  declare subscriptionId: string

  @column()
  declare customerId: string | null

  @column()
  declare status: string

  @column()
  declare planId: string | null

  @column()
  declare externalReference: string | null

  @column({ consume: consumeDate })
  declare currentPeriodEnd: Date | null

  @column({ consume: consumeDate })
  declare canceledAt: Date | null

  /** The gateway's time of the newest event that set the status (older events never overwrite it) */
  @column({ consume: consumeEpochMs })
  declare lastEventAt: Date | null

  @column({ consume: consumeDate })
  declare createdAt: Date | null

  @column({ consume: consumeDate })
  declare updatedAt: Date | null
}
