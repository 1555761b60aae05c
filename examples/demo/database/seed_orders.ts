import type { Database } from '@adonisjs/lucid/database'

/** Orders seeded unless DEMO_ORDERS says otherwise */
export const DEFAULT_ORDER_ROWS = 10_000

/** The most DEMO_ORDERS may ask for */
const MAX_ORDER_ROWS = 10_000_000

/**
 * How many orders the demo holds: DEMO_ORDERS (e.g. 1000000 to walk a
 * million), else 10,000, which seeds in well under a second.
 */
export function orderCount(value = process.env.DEMO_ORDERS): number {
  if (value === undefined || value.trim() === '') return DEFAULT_ORDER_ROWS
  const count = Number(value)
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_ORDER_ROWS) {
    throw new Error(
      `Invalid DEMO_ORDERS=${JSON.stringify(value)}: expected a whole number from 1 to ${MAX_ORDER_ROWS}, e.g. DEMO_ORDERS=1000000`
    )
  }
  return count
}

/**
 * Fills the orders table with one set-based statement (a recursive CTE) when
 * it does not hold `orderCount()` rows yet: on the first start, and again
 * when DEMO_ORDERS changes.
 */
export async function seedOrders(db: Database, log: (message: string) => void) {
  const rows = orderCount()
  const [{ total }] = await db.from('orders').count('* as total')
  if (Number(total) === rows) return
  const started = Date.now()
  log(`Seeding ${rows.toLocaleString('en-US')} orders (DEMO_ORDERS changes how many)...`)
  await db.from('orders').delete()
  await db.from('customers').delete()
  const first = [
    'Ana',
    'Bruno',
    'Carla',
    'Diego',
    'Elena',
    'Fábio',
    'Grace',
    'Hiro',
    'Inês',
    'João',
  ]
  const last = ['Souza', 'Lima', 'Martin', 'Dias', 'Okafor', 'Tanaka', 'Silva', 'Novak']
  await db
    .table('customers')
    .multiInsert(first.flatMap((name) => last.map((surname) => ({ name: `${name} ${surname}` }))))
  const [{ firstId }] = await db.from('customers').min('id as firstId')
  await db.rawQuery(`
    WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${rows})
    INSERT INTO orders (customer_id, reference, status, amount, shipped_at, created_at)
    SELECT
      ${Number(firstId)} + (n * 31) % ${first.length * last.length},
      'ORD-' || substr('0000000' || n, -7),
      CASE (n * 7) % 10 WHEN 0 THEN 'refunded' WHEN 1 THEN 'failed' WHEN 2 THEN 'pending' WHEN 3 THEN 'pending' ELSE 'paid' END,
      100 + (n * 7919) % 99900,
      CASE WHEN (n * 13) % 10 < 3 THEN NULL
        ELSE strftime('%Y-%m-%d %H:%M:%S', '2024-01-01', '+' || (n * 31 + (n * 104729) % 259200) || ' seconds') END,
      strftime('%Y-%m-%d %H:%M:%S', '2024-01-01', '+' || (n * 31) || ' seconds')
    FROM s
  `)
  await db.rawQuery('ANALYZE orders')
  log(`Seeded in ${((Date.now() - started) / 1000).toFixed(1)} s`)
}
