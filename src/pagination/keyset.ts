import { KeysetDate } from './cursor.ts'
import type {
  CursorValues,
  Keyset,
  KeysetColumn,
  KeysetSegment,
  ResolvedKeysetColumn,
  SortDirection,
} from './types.ts'

/**
 * Name of the extra column holding the database's own text of the i-th
 * keyset date, so cursors keep microseconds JavaScript dates would drop.
 */
export function preciseAlias(index: number) {
  return `__atrium_k${index}`
}

/**
 * Parses `-createdAt,title` (or an array of such parts) into sort columns.
 */
export function parseSort(sort: string | readonly string[] | undefined | null): KeysetColumn[] {
  if (!sort) return []
  const parts = (Array.isArray(sort) ? sort : [sort]).flatMap((part) => String(part).split(','))
  return parts
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) =>
      part.startsWith('-')
        ? { field: part.slice(1).trim(), direction: 'desc' as const }
        : { field: part.replace(/^\+/, '').trim(), direction: 'asc' as const }
    )
}

/**
 * The keyset of a sort: its columns plus the primary key as tiebreaker,
 * which inherits the direction of the last sort column (spec rule 1).
 */
export function buildKeyset(
  sort: string | readonly string[] | readonly KeysetColumn[],
  primaryKey: string
): Keyset {
  const columns: KeysetColumn[] =
    Array.isArray(sort) && sort.length && typeof sort[0] === 'object'
      ? (sort as KeysetColumn[]).map(({ field, direction }) => ({ field, direction }))
      : parseSort(sort as string | string[])
  const seen = new Set<string>()
  const keyset = columns.filter(({ field }) => !seen.has(field) && seen.add(field))
  if (!seen.has(primaryKey)) {
    keyset.push({ field: primaryKey, direction: keyset.at(-1)?.direction ?? 'asc' })
  }
  return keyset
}

function toDate(value: unknown): Date | null {
  if (value instanceof Date) return value
  if (value && typeof value === 'object' && typeof (value as any).toJSDate === 'function') {
    return (value as any).toJSDate()
  }
  if (typeof value === 'string') {
    const date = new Date(/^\d{4}-\d\d-\d\d \d/.test(value) ? value.replace(' ', 'T') : value)
    return Number.isNaN(date.getTime()) ? null : date
  }
  if (typeof value === 'number') return new Date(value)
  return null
}

function readField(row: any, column: KeysetColumn & { column?: string }) {
  if (row && typeof row === 'object' && '$attributes' in row) {
    return row[column.field]
  }
  if (column.field in row) return row[column.field]
  const bare = column.column?.split('.').at(-1)
  return bare !== undefined ? row[bare] : undefined
}

/**
 * The boundary values of one row (a Lucid model or a plain row) for a keyset.
 * Dates come back as dates, carrying the database's exact text when the
 * query selected it.
 */
export function extractCursorValues(
  row: any,
  keyset: readonly (KeysetColumn | ResolvedKeysetColumn)[]
): CursorValues {
  const extras = row && typeof row === 'object' && '$extras' in row ? row.$extras : row
  return keyset.map((column, index) => {
    const value = readField(row, column)
    const precise = extras?.[preciseAlias(index)]
    const type = (column as ResolvedKeysetColumn).type
    const isDate = type === 'date' || type === 'datetime'
    if (value === null || value === undefined) return null
    if (isDate || value instanceof Date || typeof (value as any)?.toJSDate === 'function') {
      const date = toDate(value)
      if (date) {
        return new KeysetDate(
          date,
          typeof precise === 'string' ? precise : typeof value === 'string' ? value : undefined
        )
      }
    }
    return typeof value === 'bigint' ? value.toString() : value
  })
}

/**
 * Removes the helper columns the keyset query selected from a fetched row.
 */
export function stripPreciseColumns(row: any, size: number) {
  const target = row && typeof row === 'object' && '$extras' in row ? row.$extras : row
  for (let index = 0; index < size; index++) {
    delete target?.[preciseAlias(index)]
  }
}

/**
 * The keyset walked backward: every direction flipped (spec rule 3).
 */
export function reverseKeyset<T extends KeysetColumn>(keyset: readonly T[]): T[] {
  return keyset.map((column) => ({
    ...column,
    direction: (column.direction === 'asc' ? 'desc' : 'asc') as SortDirection,
  }))
}

/**
 * Which keyset queries a page needs. NULLs sort as the smallest value: first
 * in ascending order, last in descending order. A nullable leading column is
 * split into its NULL block and its values so each query is an index range.
 */
export function planSegments(
  keyset: readonly ResolvedKeysetColumn[],
  values: CursorValues | null
): (KeysetSegment | null)[] {
  if (!values) return [null]
  const [lead] = keyset
  if (values[0] !== null) {
    // A leading column with few values bounds nothing on its own: seek its tie, then beyond it
    const ranges: KeysetSegment[] =
      lead.few && keyset.length > 1
        ? [
            { kind: 'tie', values },
            { kind: 'beyond', values },
          ]
        : [{ kind: 'after', values }]
    return lead.nullable && lead.direction === 'desc' ? [...ranges, { kind: 'nulls' }] : ranges
  }
  return lead.direction === 'asc'
    ? [{ kind: 'nullsAfter', values }, { kind: 'values' }]
    : [{ kind: 'nullsAfter', values }]
}

export interface SqlFragment {
  sql: string
  bindings: unknown[]
}

type Bind = (value: unknown, column: ResolvedKeysetColumn) => unknown

/**
 * How the predicate may be written for a dialect.
 */
export interface PredicateOptions {
  /**
   * Compare runs of same-direction, non-null columns as one row value
   * (`(b, id) < (y, z)`): PostgreSQL seeks an index with it (an exact
   * `Index Cond`, cheap to plan). Off for MariaDB, which does not.
   */
  rowValues?: boolean
}

interface Builder {
  keyset: readonly ResolvedKeysetColumn[]
  values: CursorValues
  bind: Bind
  rowValues: boolean
}

function strictlyAfter(
  column: ResolvedKeysetColumn,
  value: unknown,
  bind: Bind,
  nullsApart: boolean
) {
  if (value === null) {
    // Nothing sorts after NULL when descending; everything non-null does when ascending
    return column.direction === 'asc' ? { sql: '?? IS NOT NULL', bindings: [column.column] } : null
  }
  const op = column.direction === 'asc' ? '>' : '<'
  if (column.direction === 'desc' && column.nullable && !nullsApart) {
    return {
      sql: `(?? ${op} ? OR ?? IS NULL)`,
      bindings: [column.column, bind(value, column), column.column],
    }
  }
  return { sql: `?? ${op} ?`, bindings: [column.column, bind(value, column)] }
}

function equals(column: ResolvedKeysetColumn, value: unknown, bind: Bind): SqlFragment {
  return value === null
    ? { sql: '?? IS NULL', bindings: [column.column] }
    : { sql: '?? = ?', bindings: [column.column, bind(value, column)] }
}

/**
 * The last index of the row-value run starting at `from`: following columns
 * with the same direction whose column and cursor value are never NULL.
 * `from` itself when row values are off or the run has one column.
 */
function runEnd({ keyset, values, rowValues }: Builder, from: number) {
  if (!rowValues) return from
  const direction = keyset[from].direction
  let end = from - 1
  while (
    end + 1 < keyset.length &&
    keyset[end + 1].direction === direction &&
    !keyset[end + 1].nullable &&
    values[end + 1] !== null
  ) {
    end++
  }
  return Math.max(end, from)
}

/**
 * `(b, id) < (y, z)`: a run of same-direction columns compared at once.
 */
function rowAfter({ keyset, values, bind }: Builder, from: number, end: number): SqlFragment {
  const columns = keyset.slice(from, end + 1)
  const slots = columns.map(() => '?').join(', ')
  return {
    sql: `(${columns.map(() => '??').join(', ')}) ${columns[0].direction === 'asc' ? '>' : '<'} (${slots})`,
    bindings: [
      ...columns.map(({ column }) => column),
      ...columns.map((column, index) => bind(values[from + index], column)),
    ],
  }
}

/**
 * Lexicographic "strictly after" over `keyset[from..]`, each column seeking in
 * its own direction: `a > x OR (a = x AND (b < y OR (b = y AND ...)))`, with
 * runs of same-direction columns as one row value when the dialect seeks with it.
 */
function after(builder: Builder, from: number, leadingNullsApart = false): SqlFragment | null {
  const { keyset, values, bind } = builder
  const end = runEnd(builder, from)
  const strict =
    end > from
      ? rowAfter(builder, from, end)
      : strictlyAfter(keyset[from], values[from], bind, leadingNullsApart && from === 0)
  if (end === keyset.length - 1) return strict
  const rest = after(builder, end + 1)
  const ties = keyset
    .slice(from, end + 1)
    .map((column, index) => equals(column, values[from + index], bind))
  const tie = rest
    ? {
        sql: `(${[...ties, rest].map(({ sql }) => sql).join(' AND ')})`,
        bindings: [...ties, rest].flatMap(({ bindings }) => bindings),
      }
    : null
  if (strict && tie) {
    return {
      sql: `(${strict.sql} OR ${tie.sql})`,
      bindings: [...strict.bindings, ...tie.bindings],
    }
  }
  return strict ?? tie
}

/**
 * `after` from `from` on, with the column at `from` also bounded on its own
 * (`b <= y AND (b < y OR ...)`) when that bound keeps every row after the
 * cursor, so an index on the earlier (equal) columns plus this one is a range.
 * A row value covering every remaining column is a range by itself.
 */
function boundedAfter(builder: Builder, from: number): SqlFragment | null {
  const { keyset, values, bind } = builder
  const column = keyset[from]
  const value = values[from]
  const full = after(builder, from)
  if (
    !full ||
    value === null ||
    (column.nullable && column.direction === 'desc') ||
    runEnd(builder, from) === keyset.length - 1
  ) {
    return full
  }
  const bound = column.direction === 'asc' ? '>=' : '<='
  return {
    sql: `?? ${bound} ? AND ${full.sql}`,
    bindings: [column.column, bind(value, column), ...full.bindings],
  }
}

/**
 * The WHERE fragment of one keyset segment, with `??` identifiers and `?`
 * values. The leading column is always bounded on its own (`a >= x AND (...)`,
 * `a IS NULL AND (...)`) so the database seeks the index instead of scanning
 * it, unless a row value covering the whole keyset bounds it already.
 */
export function keysetPredicate(
  keyset: readonly ResolvedKeysetColumn[],
  segment: KeysetSegment,
  bind: Bind,
  options: PredicateOptions = {}
): SqlFragment {
  const lead = keyset[0]
  const builder = (values: CursorValues): Builder => ({
    keyset,
    values,
    bind,
    rowValues: options.rowValues ?? false,
  })
  switch (segment.kind) {
    case 'nulls':
      return { sql: '?? IS NULL', bindings: [lead.column] }
    case 'values':
      return { sql: '?? IS NOT NULL', bindings: [lead.column] }
    case 'nullsAfter': {
      const rest = keyset.length > 1 ? boundedAfter(builder(segment.values), 1) : null
      return rest
        ? { sql: `?? IS NULL AND ${rest.sql}`, bindings: [lead.column, ...rest.bindings] }
        : { sql: '1 = 0', bindings: [] }
    }
    case 'tie': {
      const eq = equals(lead, segment.values[0], bind)
      const rest = boundedAfter(builder(segment.values), 1)!
      return { sql: `${eq.sql} AND ${rest.sql}`, bindings: [...eq.bindings, ...rest.bindings] }
    }
    case 'beyond':
      return strictlyAfter(lead, segment.values[0], bind, true)!
    case 'after': {
      const value = segment.values[0]
      const bound = lead.direction === 'asc' ? '>=' : '<='
      const full = after(builder(segment.values), 0, true)!
      if (keyset.length === 1 || runEnd(builder(segment.values), 0) === keyset.length - 1) {
        return full
      }
      return {
        sql: `?? ${bound} ? AND ${full.sql}`,
        bindings: [lead.column, bind(value, lead), ...full.bindings],
      }
    }
  }
}

/**
 * A segment's rows as index seeks to probe one by one, their OR being the
 * segment: for the tie of `status,-amount` after (paid, 50, 7),
 * `status = ? AND amount = ? AND id < ?` then `status = ? AND amount < ?`.
 * Each is an exact seek even where the database cannot compare a row value
 * (SQLite stops one at the rowid column), so probing a segment for rows reads
 * none of the rows tied with the cursor before it. Defined for the segments
 * that start right after the cursor (`after`, `tie`, `nullsAfter`).
 */
export function segmentProbes(
  keyset: readonly ResolvedKeysetColumn[],
  segment: KeysetSegment,
  bind: Bind
): SqlFragment[] {
  if (segment.kind !== 'after' && segment.kind !== 'tie' && segment.kind !== 'nullsAfter') {
    return [keysetPredicate(keyset, segment, bind)]
  }
  const values = segment.values
  const from = segment.kind === 'after' ? 0 : 1
  const prefix: SqlFragment[] =
    segment.kind === 'after'
      ? []
      : [equals(keyset[0], segment.kind === 'tie' ? values[0] : null, bind)]
  const probes: SqlFragment[] = []
  for (let index = keyset.length - 1; index >= from; index--) {
    const strict = strictlyAfter(keyset[index], values[index], bind, index === 0)
    if (!strict) continue
    const parts = [
      ...prefix,
      ...keyset
        .slice(from, index)
        .map((column, offset) => equals(column, values[from + offset], bind)),
      strict,
    ]
    probes.push({
      sql: parts.map(({ sql }) => sql).join(' AND '),
      bindings: parts.flatMap(({ bindings }) => bindings),
    })
  }
  return probes
}
