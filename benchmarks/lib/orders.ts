/**
 * The orders/customers tables the pagination plan tests and benchmarks page
 * through, seeded with set-based SQL (generate_series on PostgreSQL,
 * seq_1_to_N on MariaDB, a recursive CTE on SQLite) so a million rows take
 * seconds, and reused when already seeded with the right count.
 */
import type { Database } from '@adonisjs/lucid/database'

export type DialectName = 'sqlite' | 'pg' | 'mysql'

export function dialectName(db: Database): DialectName {
  const name = db.connection().dialect.name
  return name === 'postgres' ? 'pg' : name === 'mysql' ? 'mysql' : 'sqlite'
}

/**
 * Rows of a raw query result, whatever the driver's shape.
 */
export function rowsOf(db: Database, result: any): any[] {
  const which = dialectName(db)
  return which === 'pg' ? result.rows : which === 'mysql' ? result[0] : result
}

async function count(db: Database, table: string): Promise<number> {
  try {
    const [row] = await db.from(table).count('* as total')
    return Number(row.total)
  } catch {
    return -1
  }
}

const STATUS_COUNT = 4

/**
 * The row expressions for integer `n` (1..rows), per dialect: a few statuses,
 * amounts with many ties, one shipped_at in five NULL, created_at spread with
 * microseconds.
 */
function selectList(which: DialectName, n: string, customers: number) {
  const status = `CASE ${n} % ${STATUS_COUNT} WHEN 0 THEN 'paid' WHEN 1 THEN 'pending' WHEN 2 THEN 'refunded' ELSE 'failed' END`
  const amount = `(${n} * 7919) % 1000`
  const customer = `1 + (${n} % ${customers})`
  switch (which) {
    case 'pg':
      return [
        customer,
        status,
        amount,
        `CASE WHEN ${n} % 5 = 0 THEN NULL ELSE timestamp '2024-06-01' + ((${n} * 104729) % 900000) * interval '1 second' END`,
        `timestamp '2024-01-01' + ((${n} * 15485863) % 30000000000::bigint) * interval '1 microsecond'`,
      ]
    case 'mysql':
      return [
        customer,
        status,
        amount,
        `CASE WHEN ${n} % 5 = 0 THEN NULL ELSE TIMESTAMP('2024-06-01') + INTERVAL ((${n} * 104729) % 900000) SECOND END`,
        `TIMESTAMP('2024-01-01') + INTERVAL ((${n} * 15485863) % 30000000000) MICROSECOND`,
      ]
    case 'sqlite':
      return [
        customer,
        status,
        amount,
        `CASE WHEN ${n} % 5 = 0 THEN NULL ELSE strftime('%Y-%m-%d %H:%M:%S', '2024-06-01', '+' || ((${n} * 104729) % 900000) || ' seconds') END`,
        `strftime('%Y-%m-%d %H:%M:%S', '2024-01-01', '+' || (((${n} * 15485863) % 30000000000) / 1000000) || ' seconds') || '.' || substr('000000' || (((${n} * 15485863) % 30000000000) % 1000000), -6)`,
      ]
  }
}

/**
 * Creates `<prefix>customers` and `<prefix>orders` with the indexes keyset
 * pages seek on, unless they already hold `rows` orders.
 */
export async function ensureOrders(db: Database, prefix: string, rows: number) {
  const which = dialectName(db)
  const orders = `${prefix}orders`
  const customers = `${prefix}customers`
  if ((await count(db, orders)) === rows && (await count(db, customers)) === 50) {
    return { orders, customers, seeded: false }
  }
  await dropOrders(db, prefix)
  await db.connection().schema.createTable(customers, (table) => {
    table.increments('id')
    table.string('name').notNullable()
  })
  await db.connection().schema.createTable(orders, (table) => {
    table.increments('id')
    table.integer('customer_id').unsigned().notNullable()
    table.string('status', 20).notNullable()
    table.integer('amount').notNullable()
    table.datetime('shipped_at', { precision: 6 }).nullable()
    table.datetime('created_at', { precision: 6 }).notNullable()
  })
  await db
    .table(customers)
    .multiInsert(Array.from({ length: 50 }, (_, index) => ({ name: `Customer ${index + 1}` })))

  const columns = 'customer_id, status, amount, shipped_at, created_at'
  const list = selectList(which, which === 'pg' ? '(n::bigint)' : 'n', 50).join(', ')
  if (which === 'pg') {
    await db.rawQuery(
      `INSERT INTO ${orders} (${columns}) SELECT ${list} FROM generate_series(1, ${rows}) AS n`
    )
  } else if (which === 'mysql') {
    await db.rawQuery(
      `INSERT INTO ${orders} (${columns}) SELECT ${list} FROM (SELECT seq AS n FROM seq_1_to_${rows}) AS s`
    )
  } else {
    await db.rawQuery(
      `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${rows}) INSERT INTO ${orders} (${columns}) SELECT ${list} FROM s`
    )
  }

  const nullsFirst = which === 'pg' ? ' NULLS FIRST' : ''
  for (const sql of [
    `CREATE INDEX ${orders}_created_idx ON ${orders} (created_at, id)`,
    `CREATE INDEX ${orders}_status_amount_idx ON ${orders} (status, amount DESC, id DESC)`,
    `CREATE INDEX ${orders}_shipped_idx ON ${orders} (shipped_at${nullsFirst}, id)`,
    `CREATE INDEX ${orders}_status_created_idx ON ${orders} (status, created_at, id)`,
  ]) {
    await db.rawQuery(sql)
  }
  await db.rawQuery(which === 'mysql' ? `ANALYZE TABLE ${orders}` : `ANALYZE ${orders}`)
  return { orders, customers, seeded: true }
}

export async function dropOrders(db: Database, prefix: string) {
  await db.connection().schema.dropTableIfExists(`${prefix}orders`)
  await db.connection().schema.dropTableIfExists(`${prefix}customers`)
}

/**
 * The plan of a query as text lines: EXPLAIN on PostgreSQL, the EXPLAIN rows
 * (table, type, key) on MariaDB, EXPLAIN QUERY PLAN on SQLite.
 */
export async function explain(db: Database, sql: string, bindings: readonly unknown[]) {
  const which = dialectName(db)
  if (which === 'sqlite') {
    const rows = rowsOf(db, await db.rawQuery(`EXPLAIN QUERY PLAN ${sql}`, bindings as any[]))
    return rows.map((row: any) => row.detail as string)
  }
  const rows = rowsOf(db, await db.rawQuery(`EXPLAIN ${sql}`, bindings as any[]))
  if (which === 'pg') return rows.map((row: any) => row['QUERY PLAN'] as string)
  return rows.map(
    (row: any) =>
      `table=${row.table} type=${row.type} key=${row.key} rows=${row.rows} ${row.Extra ?? ''}`
  )
}

/**
 * Whether a plan seeks an index range: `Index Cond` (PostgreSQL), `range`
 * (MariaDB), `SEARCH ... USING INDEX` (SQLite).
 */
export function seeksIndex(which: DialectName, plan: string[]) {
  if (which === 'pg') return plan.some((line) => line.includes('Index Cond'))
  if (which === 'mysql') return plan.some((line) => / type=range /.test(line))
  return plan.some((line) => /^SEARCH .* USING (COVERING )?INDEX/.test(line))
}

/**
 * Whether every read of `table` in a plan seeks an index range, and there are
 * at least `branches` of them (one per UNION ALL branch of a combined keyset
 * page): on PostgreSQL each scan node on the table carries an `Index Cond`
 * (on itself or its bitmap index scans), on MariaDB each row of the table is
 * `range`, on SQLite each access is `SEARCH ... USING INDEX`.
 */
export function seeksIndexInEveryBranch(
  which: DialectName,
  plan: string[],
  table: string,
  branches: number
) {
  const reads: boolean[] = []
  if (which === 'mysql') {
    for (const line of plan) {
      if (line.startsWith(`table=${table} `)) reads.push(/ type=range /.test(line))
    }
  } else if (which === 'sqlite') {
    for (const line of plan) {
      if (new RegExp(`^(SEARCH|SCAN) ${table}\\b`).test(line)) {
        reads.push(/^SEARCH .* USING (COVERING )?INDEX/.test(line))
      }
    }
  } else {
    const node = new RegExp(`(Scan|Scan Backward)( using \\S+)? on ${table}\\b`)
    const indent = (line: string) => line.search(/\S/)
    plan.forEach((line, index) => {
      if (!node.test(line) || line.includes('Bitmap Index Scan')) return
      let seeks = false
      for (const next of plan.slice(index + 1)) {
        if (indent(next) <= indent(line)) break
        if (next.includes('Index Cond')) seeks = true
      }
      reads.push(seeks)
    })
  }
  return reads.length >= branches && reads.every(Boolean)
}

/**
 * How many UNION ALL branches a keyset statement has (1 when it has none).
 */
export function branchCount(sql: string) {
  return sql.toLowerCase().split(' union all ').length
}
