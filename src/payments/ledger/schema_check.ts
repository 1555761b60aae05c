import type { QueryClientContract } from '@adonisjs/lucid/types/database'
import { PaymentsSchemaException } from '../errors.ts'
import { TABLES } from './tables.ts'

/**
 * Columns added to the billing stubs after their first release: a table
 * missing one was created by an older migration. The store never alters a
 * table; it names the fix instead.
 */
const REQUIRED: Array<[table: string, columns: string[]]> = [
  [TABLES.events, ['locked_until', 'attempts']],
  [TABLES.payments, ['external_reference', 'last_event_at']],
  [TABLES.subscriptions, ['last_event_at']],
  [TABLES.audit, ['bucket_key', 'window_start', 'occurrences']],
]

/**
 * Throws `E_PAYMENTS_SCHEMA` naming `node ace migration:run` when a billing
 * table or one of its columns is missing.
 */
export async function checkBillingSchema(client: QueryClientContract) {
  const missing: string[] = []
  for (const [table, columns] of REQUIRED) {
    const info = await client.columnsInfo(table)
    if (!Object.keys(info).length) {
      missing.push(table)
      continue
    }
    for (const column of columns) {
      if (!(column in info)) missing.push(`${table}.${column}`)
    }
  }
  if (missing.length) {
    throw new PaymentsSchemaException(missing)
  }
}
