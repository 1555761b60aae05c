import type { QueryBuilderLike } from './adapters/query_builder.ts'

/**
 * Pagination options read from `config/pagination.ts`.
 */
export interface PaginationConfig {
  /** Rows per page when a request asks for none */
  defaultPageSize: number
  /** Largest page a request may ask for, unless the call passes `trustedPageSize` */
  maxPageSize: number
  /** Signs cursors with HMAC-SHA256 when set; unsigned cursors are then ignored */
  cursorSecret?: string
}

/**
 * Filter operators a field may allow.
 */
export type FilterOperator =
  | 'eq'
  | 'ne'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'in'
  | 'notIn'
  | 'between'
  | 'contains'
  | 'startsWith'
  | 'isNull'
  | 'notNull'

/**
 * Type a request value (or a cursor's value) is checked and coerced to before
 * it reaches SQL: `integer` is SQL's 32-bit INTEGER, `bigint` the 64-bit
 * BIGINT, `number` a finite double, `uuid` an RFC 4122 text form.
 */
export type FieldType =
  'string' | 'number' | 'integer' | 'bigint' | 'boolean' | 'date' | 'datetime' | 'uuid'

/**
 * One field as the definition describes it: its column, type and nullability.
 */
export interface FieldDefinition {
  /** Column name in the table; the model's column name (or the field name) by default */
  column?: string
  /**
   * Type request values are coerced to; `string` by default, inferred for date
   * columns of models. The primary key is `integer` by default (`string` for a
   * model that assigns its own keys): declare `bigint` or `uuid` when it is one
   */
  type?: FieldType
  /** The column holds NULLs: required for a nullable sort column to page correctly */
  nullable?: boolean
  /**
   * How many distinct values the column holds. A `few` column (a status, a
   * flag) leading a sort is paged with two index ranges (its tie, then the
   * values after it) instead of one; `string` and `boolean` fields are `few`
   * by default, others `many`.
   */
  distinct?: 'few' | 'many'
}

/**
 * What a request may touch, declared next to a model (`defineFilters(Order, {...})`).
 */
export interface FilterDefinition<Field extends string = string> {
  /** Field types, columns and nullability; fields absent here are strings on a same-named column */
  fields?: Partial<Record<Field, FieldType | FieldDefinition>>
  /** Filterable fields and the operators each allows */
  filterable?: Partial<Record<Field, readonly FilterOperator[]>>
  /** Fields `search=` matches (case-insensitive contains, OR-ed) */
  searchable?: readonly Field[]
  /** Fields a request may sort by */
  sortable?: readonly Field[]
  /** Relations a request may preload with `include=` */
  includable?: readonly string[]
  /** Sort used when the request sends none, e.g. `-createdAt` */
  defaultSort?: string
  /** Largest page for this entity; the config's `maxPageSize` by default */
  maxPageSize?: number
  /** Primary key field of a plain table definition; the model's primary key for models */
  primaryKey?: string
}

/**
 * Direction of a sort or keyset column.
 */
export type SortDirection = 'asc' | 'desc'

/**
 * One column of a keyset.
 */
export interface KeysetColumn {
  field: string
  direction: SortDirection
}

/**
 * The effective sort plus the primary key as tiebreaker.
 */
export type Keyset = KeysetColumn[]

/**
 * A keyset column with what the SQL needs to know about it.
 */
export interface ResolvedKeysetColumn extends KeysetColumn {
  /** Fully qualified column (`orders.created_at`) */
  column: string
  type?: FieldType
  nullable: boolean
  /** Few distinct values: see `FieldDefinition.distinct` */
  few?: boolean
}

/**
 * Ordered boundary values of a keyset, one per column.
 */
export type CursorValues = unknown[]

/**
 * One filter condition after parsing and coercion.
 */
export interface FilterCondition {
  field: string
  operator: FilterOperator
  value: unknown
}

/**
 * Cursor paging arguments.
 */
export interface PaginateInput {
  first?: number | string
  after?: string
  last?: number | string
  before?: string
}

/**
 * Structured input; its query-string form (`ctx.request.qs()`) has the same shape with string values.
 */
export interface FilterInput {
  /** `{ status: 'paid', amount: { gte: 100 }, status: { in: 'paid,refunded' } }` */
  filter?: Record<string, unknown>
  /** Matched against the searchable fields */
  search?: string
  /** Relations to preload, comma separated or an array */
  include?: string | string[]
  /** Comma separated fields, a leading `-` means descending */
  sort?: string | string[]
  /** Cursor paging */
  paginate?: PaginateInput
  /** Offset paging */
  page?: number | string
  perPage?: number | string
}

/**
 * Input after validation.
 */
export interface NormalizedInput {
  filters: FilterCondition[]
  search?: string
  include: string[]
  sort: KeysetColumn[]
  page: number
  perPage: number
  paginate: { first?: number; last?: number; after?: string; before?: string }
}

/**
 * Options a call to `findPage`/`findAndCount` may pass.
 */
export interface PageOptions {
  /** Skips the `maxPageSize` cap: the page size comes from trusted code */
  trustedPageSize?: boolean
  /** Counts the filtered rows too (an extra query) */
  withTotal?: boolean
  /** Called with each query builder right before it runs (to log or EXPLAIN its SQL) */
  onQuery?: (query: QueryBuilderLike) => void
}

/**
 * A keyset page.
 */
export interface CursorPage<T> {
  items: T[]
  /** Cursor of the last item when more rows follow, else null */
  nextCursor: string | null
  /** Cursor of the first item when rows precede it, else null */
  prevCursor: string | null
  hasNext: boolean
  hasPrev: boolean
  /** Cursor of the first item, whatever follows (Relay `startCursor`) */
  startCursor: string | null
  /** Cursor of the last item, whatever follows (Relay `endCursor`) */
  endCursor: string | null
  /** Count of all filtered rows, only with `withTotal` */
  total?: number
}

/**
 * An offset page.
 */
export interface OffsetPage<T> {
  items: T[]
  total: number
  page: number
  perPage: number
  lastPage: number
}

/**
 * Which rows one keyset query covers. A nullable leading column splits a
 * walk in two index-friendly ranges: its NULL block and its values.
 */
export type KeysetSegment =
  /** Rows strictly after the cursor, the leading column bounded by its value */
  | { kind: 'after'; values: CursorValues }
  /** Rows tied with the cursor on the leading column and after it on the others */
  | { kind: 'tie'; values: CursorValues }
  /** Rows strictly after the cursor's leading value, NULLs aside */
  | { kind: 'beyond'; values: CursorValues }
  /** Rows whose leading column is NULL, strictly after the cursor on the other columns */
  | { kind: 'nullsAfter'; values: CursorValues }
  /** Every row whose leading column is NULL */
  | { kind: 'nulls' }
  /** Every row whose leading column is not NULL */
  | { kind: 'values' }

/**
 * The four methods `findPage` needs from a query layer.
 */
export interface KeysetAdapter<Query = QueryBuilderLike, Row = unknown> {
  /** Runs the query and returns its rows */
  getResult(query: Query): Promise<Row[]>
  /** The primary key field appended to the keyset */
  getPrimaryKey(query: Query): string
  /** Restricts the query to one segment of the keyset order */
  applyKeysetPagination(query: Query, keyset: ResolvedKeysetColumn[], segment: KeysetSegment): Query
  /**
   * Orders by the keyset and limits the rows; `segment` (when given) is the
   * segment the query was restricted to, for orderings that depend on it
   */
  applyKeysetOrderAndLimit(
    query: Query,
    keyset: ResolvedKeysetColumn[],
    limit: number,
    segment?: KeysetSegment | null
  ): Query
  /**
   * Optional: called once per page before its queries are built, to read what
   * building them needs from the database (the Lucid adapter reads a MySQL
   * table's indexes the first time)
   */
  prepareKeysetPage?(query: Query): Promise<void>
  /**
   * Optional: one query covering several segments of a page (in keyset order),
   * ordered by the keyset and limited to `limit` rows, so a page is one round
   * trip. `context.segmentEnd` is true when the cursor says the page starts past
   * the cursor's tie (its first segment is then likely empty). Return null to
   * run the segments one after the other, as for adapters without it.
   */
  combineKeysetSegments?(
    query: Query,
    keyset: ResolvedKeysetColumn[],
    segments: KeysetSegment[],
    limit: number,
    context?: { segmentEnd: boolean }
  ): Query | null
}
