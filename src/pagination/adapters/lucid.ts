import { KeysetDate } from '../cursor.ts'
import { keysetPredicate, preciseAlias, segmentProbes } from '../keyset.ts'
import {
  bareColumn,
  hasOnlyStatements,
  keysetIndex,
  keysetQueryConditions,
  querySource,
  selectsColumns,
  tableIndexes,
  type TableIndex,
} from './mysql_index_hint.ts'
import { toKnexQuery, type QueryBuilderLike } from './query_builder.ts'
import type { IndexRow } from './mysql_index_hint.ts'
import type {
  FieldType,
  KeysetAdapter,
  KeysetSegment,
  ResolvedKeysetColumn,
  SortDirection,
} from '../types.ts'

/**
 * The Lucid query builders the adapter works with: model queries
 * (`Order.query()`) and plain ones (`db.from('orders')`).
 */
export type LucidQuery = QueryBuilderLike

function pad(value: number, size = 2) {
  return String(value).padStart(size, '0')
}

/**
 * `yyyy-MM-dd HH:mm:ss(.SSS)` in local time, the way Lucid writes dates.
 */
function sqlDateTime(date: Date, type: FieldType | undefined) {
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`
  if (type === 'date') return day
  const ms = date.getMilliseconds()
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  return ms ? `${day} ${time}.${pad(ms, 3)}` : `${day} ${time}`
}

/**
 * The name of a Lucid query's dialect: `postgres`, `mysql`, `better-sqlite3`, ...
 */
export function dialectOf(query: LucidQuery): string {
  return query.client.dialect.name
}

function isPostgres(query: LucidQuery) {
  const name = dialectOf(query)
  return name === 'postgres' || name === 'redshift'
}

function isSqlite(query: LucidQuery) {
  const name = dialectOf(query)
  return name === 'better-sqlite3' || name === 'sqlite3' || name === 'libsql'
}

/**
 * A value as the driver of the query's dialect binds it: dates keep the
 * database's own text when known, booleans are 1/0 on SQLite.
 */
export function bindValue(query: LucidQuery, value: unknown, type?: FieldType): unknown {
  if (value instanceof KeysetDate && value.precise) return value.precise
  if (value && typeof value === 'object' && 'toJSDate' in value) {
    const toJSDate = value.toJSDate
    if (typeof toJSDate === 'function') value = toJSDate.call(value)
  }
  if (value instanceof Date) {
    return isSqlite(query) ? sqlDateTime(value, type) : value
  }
  if (typeof value === 'boolean' && isSqlite(query)) return value ? 1 : 0
  return value
}

/**
 * Orders a query by one column. NULLs sort as the smallest value on every
 * dialect: MySQL and SQLite do so natively, PostgreSQL is told `NULLS FIRST`
 * (ascending) or `NULLS LAST` (descending) for nullable columns.
 */
export function orderByColumn(
  query: LucidQuery,
  column: string,
  direction: SortDirection,
  nullable: boolean
) {
  if (nullable && isPostgres(query)) {
    query.orderByRaw(`?? ${direction} ${direction === 'asc' ? 'nulls first' : 'nulls last'}`, [
      column,
    ])
  } else {
    query.orderBy(column, direction)
  }
  return query
}

function preciseCast(query: LucidQuery) {
  if (isPostgres(query)) return 'CAST(?? AS text)'
  if (dialectOf(query) === 'mysql') return 'CAST(?? AS CHAR)'
  return 'CAST(?? AS TEXT)'
}

/** Statements a query may hold and still be split into UNION ALL branches */
const COMBINABLE_GROUPINGS = new Set(['where', 'columns', 'order'])

/**
 * The name the combined page's derived table takes: the table the keyset
 * columns are qualified with (so `orders.status` still resolves outside the
 * branches), `atrium_page` when none is, null when they disagree.
 */
function pageAlias(keyset: ResolvedKeysetColumn[]): string | null {
  const qualifiers = new Set(
    keyset.map(({ column }) => {
      const dot = column.lastIndexOf('.')
      return dot === -1 ? '' : column.slice(0, dot)
    })
  )
  if (qualifiers.size !== 1) return null
  const [qualifier] = qualifiers
  if (qualifier === '') return 'atrium_page'
  return qualifier.includes('.') ? null : qualifier
}

/**
 * The table a query reads when it is a plain name (no alias, no raw source).
 */
function plainTable(query: LucidQuery): string | null {
  const table = querySource(query)
  return typeof table === 'string' && /^[\w$.]+$/.test(table) ? table : null
}

/**
 * The name the query's columns are qualified with: the table or its alias;
 * null for a raw source (e.g. one carrying an index hint).
 */
function tableQualifier(query: LucidQuery): string | null {
  const table = querySource(query)
  if (typeof table !== 'string') return null
  return table
    .split(/\s+as\s+/i)
    .at(-1)!
    .trim()
}

/**
 * Whether a page's segments run as one statement unless `combineSegments`
 * says otherwise. MySQL/MariaDB: always, one range scan of the forced index
 * costs about what the tie alone does. PostgreSQL and SQLite: where the
 * cursor says the page starts past its tie (inside a group the tie alone is
 * cheaper); SQLite then reads the next segment guarded by probes of the tie,
 * since a UNION ALL costs it more than two statements.
 */
function combinesByDefault(query: LucidQuery, context: { segmentEnd: boolean }) {
  return dialectOf(query) === 'mysql' || context.segmentEnd
}

/** MySQL's error (its own spelling) for FORCE INDEX naming an index the table no longer has */
const ER_KEY_DOES_NOT_EXITS = 1176

/**
 * The keyset adapter for Lucid model queries and plain query builders.
 */
export class LucidAdapter implements KeysetAdapter<LucidQuery> {
  /** MySQL/MariaDB tables' indexes by connection and table, read once per adapter */
  #indexes = new Map<string, TableIndex[]>()
  /** Queries given FORCE INDEX, with the source they had before */
  #hinted = new WeakMap<object, { key: string; table: string }>()

  constructor(
    protected options: {
      primaryKey?: string
      /**
       * Run the segments of a page (a tie and what lies beyond it, a NULL
       * block) as one statement instead of one after the other: `true` on
       * every such page, `false` never. By default: always on MySQL/MariaDB,
       * elsewhere where the cursor says the page starts past its tie (see
       * docs/pagination.md, "Adapters")
       */
      combineSegments?: boolean
      /**
       * On MySQL and MariaDB, name the index serving a keyset query with
       * FORCE INDEX (its leading columns the ones the query fixes, then the
       * keyset's), so the optimizer seeks the range instead of reading a whole
       * `status = ?` group, and estimates no other index. On by default; the
       * indexes are read from information_schema once per table
       */
      indexHints?: boolean
    } = {}
  ) {}

  #indexKey(query: LucidQuery, table: string) {
    return `${query.client.connectionName ?? ''}\u0000${table}`
  }

  /**
   * Reads the indexes of a MySQL/MariaDB table the first time a page of it is
   * asked for, so the (synchronous) query building can name one.
   */
  async prepareKeysetPage(query: LucidQuery) {
    if (this.options.indexHints === false || dialectOf(query) !== 'mysql') return
    const table = plainTable(query)
    if (!table) return
    const key = this.#indexKey(query, table)
    if (this.#indexes.has(key)) return
    const [schema, name] = table.includes('.') ? table.split('.') : [null, table]
    const result = await query.client.rawQuery(
      `SELECT INDEX_NAME, COLUMN_NAME, COLLATION FROM information_schema.STATISTICS
       WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND COLUMN_NAME IS NOT NULL
       ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
      [schema, name]
    )
    this.#indexes.set(key, tableIndexes((result as [IndexRow[]])[0]))
  }

  /**
   * FORCE INDEX on the index serving this keyset query (see mysql_index_hint.ts
   * for why); its keyset predicate is its last where clause.
   */
  #hintIndex(query: LucidQuery, keyset: ResolvedKeysetColumn[], segment: KeysetSegment | null) {
    const table = plainTable(query)
    const indexes = table && this.#indexes.get(this.#indexKey(query, table))
    const conditions = indexes ? keysetQueryConditions(query) : null
    if (!table || !indexes || !conditions) return
    // The tie and NULL-block segments fix the leading column too (`a = x`, `a IS NULL`)
    if (segment?.kind === 'tie' || segment?.kind === 'nullsAfter') {
      conditions.fixed.add(bareColumn(keyset[0].column))
    }
    const index = keysetIndex(indexes, keyset, conditions)
    if (!index) return
    query.knexQuery.from(query.client.knexRawQuery('?? FORCE INDEX (??)', [table, index]))
    this.#hinted.set(query, { key: this.#indexKey(query, table), table })
  }

  async getResult(query: LucidQuery): Promise<unknown[]> {
    try {
      return await query
    } catch (error) {
      const hint = this.#hinted.get(query)
      const errno = error && typeof error === 'object' && 'errno' in error ? error.errno : null
      if (!hint || errno !== ER_KEY_DOES_NOT_EXITS) throw error
      // The index went away since it was read: forget the table's indexes and run unhinted
      this.#indexes.delete(hint.key)
      this.#hinted.delete(query)
      query.knexQuery.from(hint.table)
      return await query
    }
  }

  getPrimaryKey(query: LucidQuery): string {
    return query.model?.primaryKey ?? this.options.primaryKey ?? 'id'
  }

  /** How a keyset value is bound on the query's dialect */
  #binder(query: LucidQuery) {
    return (value: unknown, column: ResolvedKeysetColumn) => bindValue(query, value, column.type)
  }

  #predicate(query: LucidQuery, keyset: ResolvedKeysetColumn[], segment: KeysetSegment) {
    return keysetPredicate(keyset, segment, this.#binder(query), { rowValues: isPostgres(query) })
  }

  applyKeysetPagination(
    query: LucidQuery,
    keyset: ResolvedKeysetColumn[],
    segment: KeysetSegment
  ): LucidQuery {
    const { sql, bindings } = this.#predicate(query, keyset, segment)
    return query.whereRaw(sql, bindings)
  }

  applyKeysetOrderAndLimit(
    query: LucidQuery,
    keyset: ResolvedKeysetColumn[],
    limit: number,
    segment?: KeysetSegment | null
  ): LucidQuery {
    query.clearOrder()
    // MariaDB sorts a whole range when the ORDER BY keeps a leading column the
    // segment fixes (`a = x`, `a IS NULL`) before DESC parts; without it, it
    // walks the index
    const fixesLead =
      dialectOf(query) === 'mysql' &&
      keyset.length > 1 &&
      (segment?.kind === 'tie' || segment?.kind === 'nulls' || segment?.kind === 'nullsAfter')
    let selects = selectsColumns(query)
    const qualifier = tableQualifier(query)
    keyset.forEach((column, index) => {
      if (column.type === 'date' || column.type === 'datetime') {
        if (!selects) {
          query.select(qualifier ? `${qualifier}.*` : '*')
          selects = true
        }
        query.knexQuery.select(
          query.client.knexRawQuery(`${preciseCast(query)} as ??`, [
            column.column,
            preciseAlias(index),
          ])
        )
      }
      if (index > 0 || !fixesLead) {
        orderByColumn(query, column.column, column.direction, column.nullable)
      }
    })
    // Page 1 and the NULL block fix a prefix and bound nothing after it: `ref` is right there
    if (dialectOf(query) === 'mysql' && segment && segment.kind !== 'nulls') {
      this.#hintIndex(query, keyset, segment)
    }
    return query.limit(limit)
  }

  /**
   * A page the cursor says starts past its first segment (the tie), as one
   * statement: the second segment's rows, guarded by NOT EXISTS probes of the
   * first (each an exact index seek). It reads what a page 1 of the second
   * segment reads, plus the probes. Empty when the first segment has rows
   * after all (added since the cursor was made): the runner then reads the
   * segments one by one.
   */
  #pastFirstSegment(
    query: LucidQuery,
    keyset: ResolvedKeysetColumn[],
    [first, second]: KeysetSegment[],
    limit: number
  ): LucidQuery {
    const guards = segmentProbes(keyset, first, this.#binder(query)).map((probe) => {
      const guard = query.clone().clearSelect().clearOrder().clearLimit().clearOffset()
      guard.knexQuery.select(query.client.knexRawQuery('1'))
      // EXISTS stops at the first row: no LIMIT (one binding fewer to prepare)
      return guard.whereRaw(probe.sql, probe.bindings)
    })
    for (const guard of guards) query.whereNotExists(guard)
    this.applyKeysetPagination(query, keyset, second)
    return this.applyKeysetOrderAndLimit(query, keyset, limit, second)
  }

  /**
   * The segments of one page as one statement. On MySQL and MariaDB, their
   * predicates OR-ed: the range optimizer turns them into index ranges read in
   * order. Elsewhere, each segment a branch with its own ORDER BY and LIMIT
   * (so it stays an index range seek), the branches joined with UNION ALL in a
   * derived table named like the source table, ordered and limited again
   * outside; model queries keep their preloads and hydration, the precise date
   * columns pass through. Null (segments one after the other) unless asked by
   * `combineSegments` or by default (see `combinesByDefault`); and for UNION ALL, for
   * queries with joins, groups, unions, CTEs or locks.
   */
  combineKeysetSegments(
    query: LucidQuery,
    keyset: ResolvedKeysetColumn[],
    segments: KeysetSegment[],
    limit: number,
    context: { segmentEnd: boolean } = { segmentEnd: false }
  ): LucidQuery | null {
    if (!(this.options.combineSegments ?? combinesByDefault(query, context))) return null
    if (dialectOf(query) === 'mysql') {
      query.where((group) => {
        for (const segment of segments) {
          const { sql, bindings } = this.#predicate(query, keyset, segment)
          group.orWhereRaw(sql, bindings)
        }
      })
      this.applyKeysetOrderAndLimit(query, keyset, limit)
      // Hinted as its first segment (the tie) would be: the same index serves every range
      this.#hintIndex(query, keyset, segments[0])
      return query
    }
    if (isSqlite(query) && this.options.combineSegments === undefined && segments.length === 2) {
      return this.#pastFirstSegment(query, keyset, segments, limit)
    }
    const alias = pageAlias(keyset)
    if (!alias || !hasOnlyStatements(query, COMBINABLE_GROUPINGS)) return null
    const branches = segments.map((segment) => {
      const branch = query.clone()
      this.applyKeysetPagination(branch, keyset, segment)
      this.applyKeysetOrderAndLimit(branch, keyset, limit, segment)
      return toKnexQuery(branch)
    })
    // Knex wraps each builder binding in parentheses; SQLite takes no ORDER BY or
    // LIMIT in a compound member, so there each branch is a subquery of its own
    const member = isSqlite(query) ? 'select * from ?' : '?'
    const union = branches.map(() => member).join(' union all ')
    const page = query.clone().clearWhere().clearSelect().clearOrder().clearLimit().clearOffset()
    page.knexQuery.from(query.client.knexRawQuery(`(${union}) as ??`, [...branches, alias]))
    for (const column of keyset) {
      orderByColumn(page, column.column, column.direction, column.nullable)
    }
    return page.limit(limit)
  }
}
