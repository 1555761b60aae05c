import { BaseModel, belongsTo, column } from '@adonisjs/lucid/orm'
import type { BelongsTo } from '@adonisjs/lucid/types/relations'
import type { DateTime } from 'luxon'
import { defineFilters } from 'adonis-atrium/pagination'
import Customer from './customer.ts'

export default class Order extends BaseModel {
  @column({ isPrimary: true })
  declare id: number

  @column()
  declare customerId: number

  @column()
  declare reference: string

  @column()
  declare status: string

  @column()
  declare amount: number

  @column.dateTime()
  declare shippedAt: DateTime | null

  @column.dateTime()
  declare createdAt: DateTime

  @belongsTo(() => Customer)
  declare customer: BelongsTo<typeof Customer>
}

/**
 * What a request may do with orders: the page below passes `request.qs()` as is.
 */
export const orderFilters = defineFilters(Order, {
  fields: { amount: 'integer', shippedAt: { type: 'datetime', nullable: true } },
  filterable: {
    status: ['eq', 'in'],
    amount: ['gte', 'lte', 'between'],
    shippedAt: ['isNull', 'notNull', 'gte', 'lte'],
    createdAt: ['gte', 'lte'],
  },
  searchable: ['reference'],
  sortable: ['createdAt', 'amount', 'shippedAt', 'status'],
  includable: ['customer'],
  defaultSort: '-createdAt',
  maxPageSize: 100,
})
