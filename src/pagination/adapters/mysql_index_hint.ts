/**
 * MariaDB and MySQL pick `ref` access on an equality prefix (`status = ?`)
 * over the `range` a keyset page needs on the same index (`status = ? AND
 * created_at < ?`) whenever InnoDB's row estimate for the range is no better,
 * which happens on large tables: the page then reads the whole group in index
 * order and filters it (200 ms instead of 0.4 ms at depth 125,000 of 1,000,000
 * rows). Naming the index with FORCE INDEX makes them seek the range, and
 * spares the optimizer estimating ranges on every other index, which costs
 * about as much as reading the page. This module finds that index among the
 * table's indexes, read once from information_schema.
 *
 * Choosing the index needs what a query holds, which neither Lucid nor Knex
 * expose: this module is the one place that reads Knex's private statement
 * list (`_statements`, `_single`) and Lucid's pending where clauses
 * (`whereStack`), for the hint and for the few other questions the adapter
 * asks about a query's shape (its source, whether it selects columns, whether
 * it may become a UNION ALL branch).
 */
import type { ResolvedKeysetColumn, SortDirection } from '../types.ts'
import type { QueryBuilderLike } from './query_builder.ts'

/** Knex's private state of a query builder (knex 3) */
interface KnexInternals {
  _statements?: { grouping?: string }[]
  _single?: { table?: unknown; lock?: unknown }
}

/** Lucid's where clauses, kept aside until the query runs */
interface LucidInternals {
  whereStack?: { method: string; args: unknown[] }[][]
}

function knexInternals(query: QueryBuilderLike): KnexInternals {
  return query.knexQuery as KnexInternals
}

/**
 * The source a query reads, as written: a table name, `name as alias`, or a raw source.
 */
export function querySource(query: QueryBuilderLike): unknown {
  return query.model?.table ?? knexInternals(query)._single?.table
}

/**
 * Whether the query selects columns of its own (else it selects `*`).
 */
export function selectsColumns(query: QueryBuilderLike): boolean {
  return (knexInternals(query)._statements ?? []).some(
    (statement) => statement.grouping === 'columns'
  )
}

/**
 * Whether every statement of the query is of the given kinds (`where`,
 * `columns`, `order`) and it takes no lock.
 */
export function hasOnlyStatements(query: QueryBuilderLike, groupings: ReadonlySet<string>) {
  const { _statements: statements, _single: single } = knexInternals(query)
  if (!statements || single?.lock) return false
  return statements.every((statement) => groupings.has(statement.grouping ?? ''))
}

/** A row of information_schema.STATISTICS as the adapter reads it */
export interface IndexRow {
  INDEX_NAME: string
  COLUMN_NAME: string
  COLLATION: string | null
}

export interface IndexColumn {
  name: string
  descending: boolean
}

export interface TableIndex {
  name: string
  columns: IndexColumn[]
}

/**
 * A column's name without its table, lower-cased as information_schema gives it.
 */
export function bareColumn(column: string) {
  return column.slice(column.lastIndexOf('.') + 1).toLowerCase()
}

/**
 * The indexes of a table, each with the primary key columns appended as
 * InnoDB stores them in every secondary index.
 */
export function tableIndexes(rows: IndexRow[]): TableIndex[] {
  const byName = new Map<string, IndexColumn[]>()
  for (const row of rows) {
    const columns = byName.get(row.INDEX_NAME) ?? []
    columns.push({ name: row.COLUMN_NAME.toLowerCase(), descending: row.COLLATION === 'D' })
    byName.set(row.INDEX_NAME, columns)
  }
  const primary = byName.get('PRIMARY') ?? []
  return [...byName].map(([name, columns]) => ({
    name,
    columns: [
      ...columns,
      ...primary
        .filter((key) => !columns.some((column) => column.name === key.name))
        .map((key) => ({ name: key.name, descending: false })),
    ],
  }))
}

/**
 * What a keyset query asks besides its keyset predicate (the last where
 * clause): the columns it fixes with `where(column, value)`,
 * `where(column, '=', value)` or `whereNull(column)`, and how many other
 * conditions it has. Lucid keeps where clauses in `whereStack` until the query
 * runs. Null when the query joins tables, ORs or wraps its clauses.
 */
export function keysetQueryConditions(
  query: QueryBuilderLike
): { fixed: Set<string>; others: number } | null {
  if (knexInternals(query)._statements?.some((statement) => statement.grouping === 'join')) {
    return null
  }
  const stack = (query as LucidInternals).whereStack ?? []
  if (stack.length !== 1 || stack[0].some(({ method }) => method.startsWith('or'))) return null
  const fixed = new Set<string>()
  let others = 0
  for (const { method, args } of stack[0].slice(0, -1)) {
    const [column, operator, value] = args
    const equality =
      typeof column === 'string' &&
      ((method === 'where' && args.length === 2 && isScalar(operator)) ||
        (method === 'where' && args.length === 3 && operator === '=' && isScalar(value)) ||
        (method === 'whereNull' && args.length === 1))
    if (equality) fixed.add(bareColumn(column))
    else others++
  }
  return { fixed, others }
}

function isScalar(value: unknown) {
  return value === null || ['string', 'number', 'boolean', 'bigint'].includes(typeof value)
}

/**
 * The index serving a keyset query: its leading columns are exactly the
 * columns the query fixes (any order), followed by the keyset's other columns
 * in order, each in the keyset's direction (or each reversed, for a backward
 * scan). A range on it reads just the page. A query that fixes nothing gets
 * one only when it has no other condition either: a selective filter may be
 * better served by its own index. The longest match wins; null when none.
 */
export function keysetIndex(
  indexes: readonly TableIndex[],
  keyset: readonly ResolvedKeysetColumn[],
  conditions: { fixed: ReadonlySet<string>; others: number }
): string | null {
  const { fixed, others } = conditions
  if (fixed.size === 0 && others > 0) return null
  const sorted = keyset
    .map(({ column, direction }) => ({ name: bareColumn(column), direction }))
    .filter(({ name }) => !fixed.has(name))
  let best: { name: string; matched: number } | null = null
  for (const index of indexes) {
    let prefix = 0
    while (prefix < index.columns.length && fixed.has(index.columns[prefix].name)) prefix++
    if (prefix !== fixed.size) continue
    let matched = 0
    let reversed: boolean | null = null
    while (matched < sorted.length && prefix + matched < index.columns.length) {
      const column = index.columns[prefix + matched]
      const wanted: { name: string; direction: SortDirection } = sorted[matched]
      const flipped = column.descending !== (wanted.direction === 'desc')
      if (column.name !== wanted.name || (reversed !== null && flipped !== reversed)) break
      reversed = flipped
      matched++
    }
    if (matched > 0 && (!best || matched > best.matched)) best = { name: index.name, matched }
  }
  return best?.name ?? null
}
