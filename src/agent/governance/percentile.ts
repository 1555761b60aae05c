import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/**
 * The 95th percentile of a column by the nearest-rank method, computed in
 * the database with window functions SQLite (3.25+), PostgreSQL and
 * MariaDB (10.2+) all have: rows are ranked per group, and the p95 is the
 * smallest value whose rank k satisfies k * 100 >= n * 95. Integer
 * comparisons only, so no dialect's division or ceil() is involved.
 */
export async function nearestRankP95(
  client: QueryClientContract,
  options: { table: string; value: string; group?: string; where: (query: any) => any }
): Promise<Array<{ group: string | null; p95: number }>> {
  const partition = options.group ? 'partition by ?? ' : ''
  const partitionBindings = options.group ? [options.group] : []
  const ranked = options.where(
    client
      .from(options.table)
      .whereNotNull(options.value)
      .select(
        client.raw('?? as group_key', [options.group ?? options.value]),
        client.raw('?? as measured', [options.value]),
        client.raw(`row_number() over (${partition}order by ??) as rank_in_group`, [
          ...partitionBindings,
          options.value,
        ]),
        client.raw(`count(*) over (${partition.trimEnd()}) as group_size`, partitionBindings)
      )
  )
  const query = client
    .from(ranked.as('ranked'))
    .whereRaw('rank_in_group * 100 >= group_size * 95')
    .min('measured as p95')
  if (options.group) query.select('group_key').groupBy('group_key')
  const rows = await query
  return rows
    .filter((row: any) => row.p95 !== null && row.p95 !== undefined)
    .map((row: any) => ({
      group: options.group ? row.group_key : null,
      p95: Number(row.p95),
    }))
}
