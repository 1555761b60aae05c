import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate, consumeMoney } from './columns.ts'

/**
 * One refund, keyed by the gateway refund id.
 */
export default class BillingRefund extends BaseModel {
  static table = 'billing_refunds'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare provider: string

  @column()
  declare refundId: string

  @column()
  declare paymentId: string

  @column({ consume: consumeMoney })
  declare amount: number

  @column()
  declare currency: string | null

  @column({ consume: consumeDate })
  declare createdAt: Date | null

  @column({ consume: consumeDate })
  declare updatedAt: Date | null
}
