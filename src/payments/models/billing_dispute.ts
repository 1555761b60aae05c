import { BaseModel, column } from '@adonisjs/lucid/orm'
import { consumeDate, consumeMoney } from './columns.ts'

/**
 * A dispute or pre-dispute warning, with its answer deadline.
 */
export default class BillingDispute extends BaseModel {
  static table = 'billing_disputes'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare provider: string

  @column()
  declare disputeId: string

  @column()
  declare paymentId: string

  @column()
  declare status: 'warning' | 'open' | 'closed'

  @column()
  declare outcome: 'won' | 'lost' | 'expired' | 'canceled' | null

  @column({ consume: consumeMoney })
  declare amount: number | null

  @column()
  declare currency: string | null

  @column()
  declare reason: string | null

  @column({ consume: consumeDate })
  declare actionableUntil: Date | null

  @column({ consume: consumeDate })
  declare createdAt: Date | null

  @column({ consume: consumeDate })
  declare updatedAt: Date | null
}
