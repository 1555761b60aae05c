/**
 * The part of a Lucid query builder pagination works with: what the runner
 * and the keyset adapter call, and nothing else. Lucid's model queries
 * (`Order.query()`) and plain ones (`db.from('orders')`) satisfy it; a
 * recording double in tests does too. Knex's private statement list is read
 * in one place only, `mysql_index_hint.ts`, through `knexQuery`.
 */

/**
 * The connection a query runs on, as the adapter needs it.
 */
export interface QueryClientLike {
  /** `postgres`, `mysql`, `better-sqlite3`, ... */
  readonly dialect: { readonly name: string }
  readonly connectionName?: string
  /** A raw SQL fragment with `??` identifiers and `?` values, to embed in a query */
  knexRawQuery(sql: string, bindings?: unknown): unknown
  /** Runs raw SQL (the MySQL index list read) */
  rawQuery(sql: string, bindings?: unknown): PromiseLike<unknown>
}

/**
 * The query builder methods pagination calls. Each returns the builder, as
 * Lucid's do; awaiting the builder runs it.
 */
export interface QueryBuilderLike<Row = unknown> extends PromiseLike<Row[]> {
  readonly client: QueryClientLike
  /** The model of a model query: its table and primary key */
  readonly model?: { readonly table: string; readonly primaryKey: string }
  /**
   * The underlying Knex builder: opaque here, read only by
   * `mysql_index_hint.ts`, written through `from()`/`select()`
   */
  readonly knexQuery: KnexBuilderLike

  where(column: string, value: unknown): this
  where(column: string, operator: string, value: unknown): this
  where(callback: (group: this) => void): this
  whereNot(column: string, value: unknown): this
  whereIn(column: string, values: unknown[]): this
  whereNotIn(column: string, values: unknown[]): this
  whereBetween(column: string, range: [unknown, unknown]): this
  whereNull(column: string): this
  whereNotNull(column: string): this
  whereRaw(sql: string, bindings: unknown): this
  orWhereRaw(sql: string, bindings: unknown): this
  whereNotExists(query: unknown): this
  orderBy(column: string, direction?: 'asc' | 'desc'): this
  orderByRaw(sql: string, bindings: unknown): this
  select(...columns: unknown[]): this
  limit(limit: number): this
  clearSelect(): this
  clearWhere(): this
  clearOrder(): this
  clearLimit(): this
  clearOffset(): this
  /** A copy to add a segment's predicate to; Lucid's copy is the same kind of builder */
  clone(): QueryBuilderLike<Row>
  /** The SQL with its values inlined, for logs */
  toQuery(): string
  /** The SQL and its bindings, to EXPLAIN */
  toSQL(): { sql: string; bindings: readonly unknown[] }
}

/**
 * What the adapter does to a Knex builder: replace its source, add a raw column.
 */
export interface KnexBuilderLike {
  from(source: unknown): unknown
  select(...columns: unknown[]): unknown
}

/**
 * The Knex builder of a query with its where clauses applied (Lucid keeps
 * them aside until the query runs), to embed it in another statement.
 */
export function toKnexQuery(query: QueryBuilderLike): unknown {
  const builder = query as unknown as { toKnex?: () => unknown }
  return typeof builder.toKnex === 'function' ? builder.toKnex() : query.knexQuery
}
