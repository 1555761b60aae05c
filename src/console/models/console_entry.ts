import { BaseModel, column } from '@adonisjs/lucid/orm'
import type { EntryType } from '../types.ts'

/** `,slow,duplicate,` in the table; `['slow', 'duplicate']` in code */
const tags = {
  prepare: (value: string[]) => (value.length ? `,${value.join(',')},` : ''),
  consume: (value: string | null) => (value ? value.split(',').filter(Boolean) : []),
}

/**
 * One recorded entry in `console_entries`. Ids are time-ordered, so the
 * primary key alone pages lists and bounds age cutoffs.
 */
export default class ConsoleEntryModel extends BaseModel {
  static table = 'console_entries'
  static selfAssignPrimaryKey = true

  @column({ isPrimary: true })
  declare id: string

  @column()
  declare batchId: string

  @column()
  declare type: EntryType

  @column()
  declare summary: string

  @column({ consume: (value) => (value === null ? null : Number(value)) })
  declare status: number | null

  @column()
  declare method: string | null

  @column({ consume: (value) => (value === null ? null : Number(value)) })
  declare durationMs: number | null

  @column({ consume: (value) => value === true || value === 1 || value === '1' })
  declare slow: boolean

  @column(tags)
  declare tags: string[]

  @column({ consume: (value) => Number(value) })
  declare createdAt: number

  @column({
    prepare: (value: Record<string, unknown>) => JSON.stringify(value),
    consume: (value: string | Record<string, unknown>) =>
      typeof value === 'string' ? JSON.parse(value) : value,
  })
  declare content: Record<string, unknown>
}

/** Tags as the `tags` column stores them */
export const prepareTags = tags.prepare
