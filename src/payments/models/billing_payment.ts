import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate, consumeEpochMs, consumeMoney } from './columns.ts'

/**
 * A payment as the gateways last reported it; money in minor units.
 */
export default class BillingPayment extends BaseModel {
  static table = 'billing_payments'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare provider: string

  @column()
  declare paymentId: string

  @column()
  declare status: 'pending' | 'paid' | 'failed' | 'refunded' | 'disputed'

  @column({ consume: consumeMoney })
  declare amount: number

  @column()
  declare currency: string | null

  @column({ consume: consumeMoney })
  declare refundedAmount: number

  @column()
  declare customerId: string | null

  @column()
  declare externalReference: string | null

  @column({ consume: consumeDate })
  declare paidAt: Date | null

  /** The gateway's time of the newest event that set the status (older events never overwrite it) */
  @column({ consume: consumeEpochMs })
  declare lastEventAt: Date | null

  @column({ consume: consumeDate })
  declare createdAt: Date | null

  @column({ consume: consumeDate })
  declare updatedAt: Date | null
}
