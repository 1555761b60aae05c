import type { Database } from '@adonisjs/lucid/database'

export const ORDER_ROWS = 1_000_000

/**
 * Fills the orders table on first start with one set-based statement (a
 * recursive CTE): a million rows in a few seconds, skipped once seeded.
 */
export async function seedOrders(db: Database, log: (message: string) => void) {
  const [{ total }] = await db.from('orders').count('* as total')
  if (Number(total) > 0) return
  const started = Date.now()
  log(`Seeding ${ORDER_ROWS.toLocaleString('en-US')} orders (first start only)...`)
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
  await db.rawQuery(`
    WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${ORDER_ROWS})
    INSERT INTO orders (customer_id, reference, status, amount, shipped_at, created_at)
    SELECT
      1 + (n * 31) % ${first.length * last.length},
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
