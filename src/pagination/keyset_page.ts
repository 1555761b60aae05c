/**
 * The parts of a keyset page that need no runner state: reading its cursor,
 * reading its rows segment by segment, and checking nullability.
 */
import type { QueryBuilderLike } from './adapters/query_builder.ts'
import { inspectCursor, KeysetDate, type DecodedCursor } from './cursor.ts'
import { InvalidPaginationQueryException, PaginationConfigException } from './errors.ts'
import { extractCursorValues } from './keyset.ts'
import { cursorValue, expectation } from './values.ts'
import type {
  CursorValues,
  KeysetAdapter,
  KeysetSegment,
  PageOptions,
  ResolvedKeysetColumn,
} from './types.ts'

/**
 * A cursor's values checked against the keyset: null for a cursor to
 * ignore (unreadable or the wrong length: the first page), a 400 naming
 * the parameter for one made under another sort or holding a value that
 * does not fit its column (a forged cursor would otherwise reach SQL).
 */
export function checkCursor(
  given: string,
  parameter: string,
  keyset: ResolvedKeysetColumn[],
  options: { fingerprint: string; secret?: string }
): (DecodedCursor & { values: CursorValues }) | null {
  const read = inspectCursor(given, options)
  if (read.kind === 'foreign') {
    throw new InvalidPaginationQueryException(
      `Invalid value for ${parameter}: the cursor was made under another sort. Send the sort of the walk, or start again without a cursor`,
      parameter
    )
  }
  if (read.kind === 'unreadable' || read.cursor.values.length !== keyset.length) return null
  const values = keyset.map((column, index) => {
    const value = read.cursor.values[index]
    if (value === null && column.nullable) return null
    const checked = value === null ? undefined : cursorValue(value, column.type)
    if (checked === undefined) {
      throw new InvalidPaginationQueryException(
        `Invalid value for ${parameter}: its "${column.field}" is not ${value === null ? 'nullable' : expectation(column.type)}`,
        parameter
      )
    }
    return checked
  })
  return { ...read.cursor, values }
}

/**
 * A NULL in a sort column not declared nullable: its rows are ordered where
 * the keyset predicates do not look for them, so a walk would skip them.
 * Said at once, naming the field and the fix.
 */
export function assertDeclaredNulls(values: CursorValues, keyset: ResolvedKeysetColumn[]) {
  keyset.forEach((column, index) => {
    if (values[index] === null && !column.nullable) {
      throw new PaginationConfigException(
        `The sort column "${column.field}" holds NULL but is not declared nullable, so a cursor walk would skip its NULL rows. Declare it in defineFilters: fields: { ${column.field}: { nullable: true } }`
      )
    }
  })
}

/**
 * Fails naming the field when a sort column not declared nullable holds
 * NULL among the filtered rows (one query, run where a walk ends).
 */
export async function probeUndeclaredNulls(
  adapter: KeysetAdapter,
  base: QueryBuilderLike,
  keyset: ResolvedKeysetColumn[]
) {
  const primaryKey = adapter.getPrimaryKey(base)
  const undeclared = keyset.filter((column) => !column.nullable && column.field !== primaryKey)
  if (undeclared.length === 0) return
  const probe = base.clone().clearOrder().limit(1)
  probe.where((group) => {
    for (const column of undeclared) group.orWhereRaw('?? IS NULL', [column.column])
  })
  const [row] = await adapter.getResult(probe)
  if (row !== undefined) assertDeclaredNulls(extractCursorValues(row, keyset), keyset)
}

/**
 * Up to `limit` rows of a page's segments in keyset order: in one statement
 * when the adapter combines them (a tie and what lies beyond it, a NULL
 * block), otherwise one after the other, each only while the page is short.
 */
export async function readRows(
  adapter: KeysetAdapter,
  base: QueryBuilderLike,
  keyset: ResolvedKeysetColumn[],
  segments: (KeysetSegment | null)[],
  limit: number,
  { segmentEnd, onQuery }: { segmentEnd: boolean; onQuery?: PageOptions['onQuery'] }
): Promise<unknown[]> {
  const combined =
    segments.length > 1
      ? adapter.combineKeysetSegments?.(base.clone(), keyset, segments as KeysetSegment[], limit, {
          segmentEnd,
        })
      : null
  if (combined) {
    onQuery?.(combined)
    const rows = await adapter.getResult(combined)
    // A combined read may come back empty when it cannot answer (a guarded read whose
    // guard failed): the segments are then read one by one
    if (rows.length > 0) return rows
  }
  let rows: unknown[] = []
  for (const segment of segments) {
    if (rows.length >= limit) break
    const query = base.clone()
    if (segment) adapter.applyKeysetPagination(query, keyset, segment)
    adapter.applyKeysetOrderAndLimit(query, keyset, limit - rows.length, segment)
    onQuery?.(query)
    rows = rows.concat(await adapter.getResult(query))
  }
  return rows
}

/**
 * The count of the rows a page's base query filters (`withTotal`).
 */
export async function countRows(query: QueryBuilderLike): Promise<number> {
  const count = query.clone().clearOrder().clearLimit().clearOffset().clearSelect()
  const counted = (count as unknown as { count(column: string): QueryBuilderLike }).count(
    '* as total'
  )
  const pojo = (counted as { pojo?: () => PromiseLike<unknown[]> }).pojo
  const rows = (await (typeof pojo === 'function' ? pojo.call(counted) : counted)) as {
    total?: number | string
  }[]
  return Number(rows[0]?.total ?? 0)
}

/**
 * Whether the row fetched after a page's last row lies in another segment than
 * that row: past a few-valued leading column's tie, or across a nullable
 * leading column's NULL block. Dates compare with full precision.
 */
export function leavesSegment(rows: unknown[], size: number, keyset: ResolvedKeysetColumn[]) {
  const [lead] = keyset
  if (!lead.few && !lead.nullable) return false
  const [last] = extractCursorValues(rows[size - 1], [lead])
  const [next] = extractCursorValues(rows[size], [lead])
  if ((last === null) !== (next === null)) return true
  if (!lead.few || keyset.length === 1 || last === null) return false
  if (last instanceof KeysetDate && next instanceof KeysetDate) {
    return last.precise !== undefined && next.precise !== undefined
      ? last.precise !== next.precise
      : last.getTime() !== next.getTime()
  }
  return last !== next
}
