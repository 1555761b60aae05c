/**
 * Reads a stored date the same way on every dialect (SQLite keeps epoch ms).
 */
export function consumeDate(value: unknown): Date | null {
  if (value === null || value === undefined) {
    return null
  }
  if (value instanceof Date) {
    return value
  }
  const date = new Date(
    typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : (value as string)
  )
  return Number.isNaN(date.getTime()) ? null : date
}

/**
 * bigint columns come back as strings on PostgreSQL: money is a number of minor units.
 */
export function consumeMoney(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value)
}

/**
 * An epoch-ms bigint column (`last_event_at`, `window_start`) as a Date.
 */
export function consumeEpochMs(value: unknown): Date | null {
  return value === null || value === undefined ? null : new Date(Number(value))
}
